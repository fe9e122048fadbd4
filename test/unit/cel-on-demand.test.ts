/**
 * The CEL engine is loaded on first use (src/cel/engine.ts): the server's modules, and a schema
 * without rules validated and checked, load none of it; the first rule does, and works.
 */
import assert from 'node:assert/strict';
import { createRequire, register } from 'node:module';
import { test } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import type { SchemaProblem, Structural } from '../../src/api/schema/structural.js';

// every module the server's imports resolve to (ESM, reported by a resolve hook), and what
// `require` loaded (the engine's CommonJS build)
const { port1, port2 } = new MessageChannel();
const resolved: string[] = [];
port1.on('message', (url: string) => resolved.push(url));
port1.unref();
const hook = 'let port; export function initialize(data) { port = data.port; } export async function resolve(specifier, context, next) { const r = await next(specifier, context); port.postMessage(r.url); return r; }';
register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { port: port2 }, transferList: [port2] });

async function celLoaded(): Promise<boolean> {
  await new Promise((r) => setTimeout(r, 50)); // the hook's messages arrive asynchronously
  const files = [...resolved, ...Object.keys(createRequire(import.meta.url).cache)];
  return files.some((file) => file.includes('/@bufbuild/cel/'));
}

test('a server without CEL rules never loads the CEL engine; the first rule loads it', async () => {
  await import('../../src/apiserver.js');
  const { parseStructural } = await import('../../src/api/schema/structural.js');
  const { RuleValidator } = await import('../../src/apiextensions/cel/rule-validator.js');
  const { validateRules } = await import('../../src/apiextensions/cel/rules.js');
  const { formatFieldError } = await import('../../src/status/status-error.js');
  assert.ok(resolved.some((url) => url.endsWith('/src/apiserver.js')), 'the resolve hook saw the server load');

  const spec = (extra: Record<string, unknown>): Structural => {
    const problems: SchemaProblem[] = [];
    const out = parseStructural({ type: 'object', properties: { spec: { type: 'object', properties: { min: { type: 'integer' }, max: { type: 'integer' } }, ...extra } } }, 'schema', problems);
    assert.deepEqual(problems, []);
    return out;
  };
  const plain = spec({});
  assert.deepEqual(validateRules(plain, 'schema'), []);
  assert.deepEqual(new RuleValidator(plain).validate({ spec: { min: 2, max: 1 } }), []);
  assert.equal(await celLoaded(), false, 'loading the server and checking a schema without rules loaded @bufbuild/cel');

  const ruled = spec({ 'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: 'min must not exceed max' }] });
  assert.deepEqual(validateRules(ruled, 'schema'), []);
  assert.deepEqual(new RuleValidator(ruled).validate({ spec: { min: 2, max: 1 } }).map(formatFieldError), ['spec: Invalid value: "object": min must not exceed max']);
  assert.equal(await celLoaded(), true);
});
