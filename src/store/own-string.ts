/**
 * A string of its own. The strings of stored objects come from msgpackr, which decodes runs of
 * short strings at once and hands out slices of the run (V8 sliced strings). A slice kept to be
 * written on every response made the write itself slow: the priority-and-fairness UID headers cost
 * about a fifth of a GET's server CPU as slices, and nothing measurable as copies (CPU profiles of
 * 18,000 GETs, docs/decisions.md). A copy also lets the decoded run go.
 */
export function ownString(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}
