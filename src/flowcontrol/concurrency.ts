/**
 * How the server's concurrency limit (ServerCL = --max-requests-inflight +
 * --max-mutating-requests-inflight) is divided among priority levels, as Kubernetes 1.32 does:
 *
 *   NominalCL(i)  = ceil(ServerCL * NCS(i) / sum of NCS)
 *   LendableCL(i) = round(NominalCL(i) * lendablePercent(i) / 100)
 *   BorrowingCL(i)= round(NominalCL(i) * borrowingLimitPercent(i) / 100), unbounded when unset
 *   MinCL = NominalCL - LendableCL; MaxCL = NominalCL + BorrowingCL
 *
 * and, periodically, CurrentCL(i) is the fair allocation of ServerCL among the Limited levels
 * with bounds [MinCL, MaxCL], in proportion to each level's smoothed seat demand (its target).
 */

export interface LevelShares {
  name: string;
  exempt: boolean;
  shares: number;
  lendablePercent: number;
  /** undefined: may borrow without limit */
  borrowingLimitPercent: number | undefined;
}

export interface LevelLimits { nominal: number; lendable: number; min: number; max: number }

export function nominalLimits(serverLimit: number, levels: readonly LevelShares[]): Map<string, LevelLimits> {
  const sum = levels.reduce((total, l) => total + l.shares, 0);
  const limits = new Map<string, LevelLimits>();
  for (const l of levels) {
    const nominal = sum > 0 ? Math.ceil(serverLimit * l.shares / sum) : 0;
    const lendable = Math.round(nominal * l.lendablePercent / 100);
    const borrowing = l.borrowingLimitPercent === undefined ? Infinity : Math.round(nominal * l.borrowingLimitPercent / 100);
    limits.set(l.name, { nominal, lendable, min: nominal - lendable, max: nominal + borrowing });
  }
  return limits;
}

export interface AllocationClass { lower: number; upper: number; target: number }

/**
 * computeConcurrencyAllocation: the fair proportion p for which the sum of
 * clamp(p * target, lower, upper) is `required`, found by bisection; the allocations rounded.
 */
export function allocate(required: number, classes: readonly AllocationClass[]): number[] {
  const at = (p: number) => classes.map((c) => Math.min(c.upper, Math.max(c.lower, p * c.target)));
  const total = (p: number) => at(p).reduce((a, b) => a + b, 0);
  const lowerSum = classes.reduce((a, c) => a + c.lower, 0);
  const upperSum = classes.reduce((a, c) => a + c.upper, 0);
  if (required <= lowerSum) return classes.map((c) => c.lower);
  if (required >= upperSum) return classes.map((c) => (Number.isFinite(c.upper) ? c.upper : Math.max(c.lower, c.target)));
  let lo = 0;
  let hi = 1;
  while (total(hi) < required && hi < 1e12) hi *= 2;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (total(mid) < required) lo = mid; else hi = mid;
  }
  return at(hi).map((v) => Math.round(v));
}

/**
 * The seat demand a level's target follows: the period's high watermark, smoothed so a level
 * gives up borrowed seats slowly (Kubernetes' 0.977 decay per adjustment).
 */
export function smoothDemand(previous: number, envelope: number): number {
  return Math.max(envelope, 0.977 * previous + 0.023 * envelope);
}
