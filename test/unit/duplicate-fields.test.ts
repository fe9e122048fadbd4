import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { duplicateFields } from '../../src/codec/duplicate-fields.js';

describe('duplicateFields', () => {
  const cases: Array<[string, string[]]> = [
    ['{"a":1,"b":2}', []],
    ['{"metadata":{"name":"a","name":"b"}}', ['metadata.name']],
    ['{"a":1,"a":2,"a":3}', ['a', 'a']],
    ['{"secrets":[{"name":"x"},{"name":"y","name":"z"}]}', ['secrets[1].name']],
    ['{"a":"}{\\"a\\":1","b":{"c":[1,2,{"d":true,"d":null}]}}', ['b.c[2].d']],
    ['{"\\u0061":1,"a":2}', ['a']],
    [' { "x" : [ ] , "y" : { } , "x" : 1 } ', ['x']],
    ['[{"a":1},{"a":1}]', []],
  ];
  for (const [json, expected] of cases) {
    it(`finds ${JSON.stringify(expected)} in ${json}`, () => {
      JSON.parse(json); // every case is valid JSON
      assert.deepEqual(duplicateFields(json), expected);
    });
  }
});
