/**
 * The CEL engine is loaded on first use (src/cel/engine.ts): the server's modules, and a schema
 * without rules validated and checked, load none of it; the first rule does, and works.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SchemaProblem, Structural } from '../../src/api/schema/structural.js';
import { watchModuleLoads } from '../support/loaded-modules.js';

const modules = watchModuleLoads();
const celLoaded = (): Promise<boolean> => modules.loaded('/@bufbuild/cel/');

test('a server without CEL rules never loads the CEL engine; the first rule loads it', async () => {
  await import('../../src/apiserver.js');
  const { parseStructural } = await import('../../src/api/schema/structural.js');
  const { RuleValidator } = await import('../../src/apiextensions/cel/rule-validator.js');
  const { validateRules } = await import('../../src/apiextensions/cel/rules.js');
  const { formatFieldError } = await import('../../src/status/status-error.js');
  assert.ok(modules.resolved.some((url) => url.endsWith('/src/apiserver.js')), 'the resolve hook saw the server load');

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
