// Node module hooks for k6/check.mjs: `k6` and `k6/...` imports resolve to the stubs next to this
// file. A name a script imports that the stub does not export fails at link time, as it would
// in k6, so the stubs export only what k6's documentation lists.
const stubs = new Map([
  ['k6', 'k6.mjs'],
  ['k6/http', 'http.mjs'],
  ['k6/ws', 'ws.mjs'],
  ['k6/metrics', 'metrics.mjs'],
  ['k6/execution', 'execution.mjs'],
]);

export async function resolve(specifier, context, next) {
  if (specifier === 'k6' || specifier.startsWith('k6/')) {
    const file = stubs.get(specifier);
    if (!file) throw new Error(`k6 check: no stub for '${specifier}' (add one only for a module k6 documents)`);
    return { url: new URL(`./stubs/${file}`, import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
