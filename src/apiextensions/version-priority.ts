/**
 * Kubernetes' version priority (apimachinery's CompareKubeAwareVersionStrings): GA before beta
 * before alpha, higher major then higher minor first; names that are not Kubernetes versions come
 * last, alphabetically. Discovery lists a group's versions in this order, the first preferred.
 */
const kubeVersion = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

function rank(v: string): [number, number, number] | undefined {
  const m = kubeVersion.exec(v);
  if (!m) return undefined;
  const stability = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
  return [stability, Number(m[1]), m[3] ? Number(m[3]) : 0];
}

export function compareVersionPriority(a: string, b: string): number {
  const ra = rank(a);
  const rb = rank(b);
  if (!ra || !rb) return ra ? -1 : rb ? 1 : a < b ? -1 : a > b ? 1 : 0;
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i] - ra[i];
  return 0;
}
