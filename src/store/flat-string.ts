/**
 * A flat copy of a string. Node's `crypto.randomUUID()`, which makes every object's UID, builds
 * its result by concatenation: a V8 cons string of a few dozen pieces, which every write to a
 * socket walks again. Kept and written on every response (the priority-and-fairness UID headers),
 * such strings cost about a fifth of a GET's server CPU; flat copies made once cost nothing
 * measurable (CPU profiles of 18,000 GETs, docs/decisions.md). Copying the per-request Audit-Id
 * measured no gain, so only strings written again and again are worth it.
 */
export function flatString(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}
