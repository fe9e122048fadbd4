/** The CBOR reader: RFC 8949 examples in the JSON data model, and kube-apiserver's decode-mode limits. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CborError, decodeCborItem } from '../../src/codec/cbor-decode.js';

const hex = (h: string) => Buffer.from(h.replace(/\s/g, ''), 'hex');
const refuses = (h: string | Buffer, message: string) =>
  assert.throws(() => decodeCborItem(typeof h === 'string' ? hex(h) : h), (e: unknown) => e instanceof CborError && e.message.includes(message), message);

describe('decodeCborItem', () => {
  it('reads the RFC 8949 examples that have a JSON form', () => {
    const cases: Array<[string, unknown]> = [
      ['00', 0], ['17', 23], ['1818', 24], ['1903e8', 1000], ['1b000000e8d4a51000', 1000000000000], ['20', -1], ['3903e7', -1000],
      ['f90000', 0], ['f93c00', 1], ['f9c400', -4], ['fa47c35000', 100000], ['fb3ff199999999999a', 1.1],
      ['f4', false], ['f5', true], ['f6', null], ['6161', 'a'], ['62225c', '"\\'], ['64f0908591', '\u{10151}'],
      ['83010203', [1, 2, 3]], ['9f018202039f0405ffff', [1, [2, 3], [4, 5]]], ['a26161016162820203', { a: 1, b: [2, 3] }],
      ['bf61610161629f0203ffff', { a: 1, b: [2, 3] }], ['7f657374726561646d696e67ff', 'streaming'], ['4401020304', 'AQIDBA=='],
      ['c074323031332d30332d32315432303a30343a30305a', '2013-03-21T20:04:00Z'], ['c11a514b67b0', '2013-03-21T20:04:00Z'],
      ['d82076687474703a2f2f7777772e6578616d706c652e636f6d', 'http://www.example.com'],
    ];
    for (const [h, want] of cases) assert.deepEqual(decodeCborItem(hex(h)), want, h);
  });

  it('keeps a __proto__ key as data', () => {
    const v = decodeCborItem(hex('a1 69 5f5f70726f746f5f5f 01')) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(Object.entries(v), [['__proto__', 1]]);
  });

  it('reads shared-reference tags as their content', () => {
    assert.deepEqual(decodeCborItem(hex('d81c 81 d81d 00')), [0]);
  });

  it('refuses what kube-apiserver refuses', () => {
    refuses(Buffer.from([...Array(64).fill(0x81), 0x00]), 'exceeded max nested level 64');
    assert.deepEqual(decodeCborItem(Buffer.from([...Array(63).fill(0x81), 0x00])), JSON.parse(`${'['.repeat(63)}0${']'.repeat(63)}`));
    refuses('a2 6161 01 6161 02', 'found duplicate map key "a" at map element index 1');
    refuses('a1 01 02', 'invalid map key type: positive integer');
    refuses('a1 4161 02', 'invalid map key type: byte string');
    refuses('f7', 'simple value 23 is not recognized');
    refuses('f0', 'simple value 16 is not recognized');
    refuses('f818', 'invalid simple value 24');
    refuses('c2 41 01', 'bignum');
    refuses('fb7ff8000000000000', 'NaN');
    refuses('f97c00', 'infinity');
    refuses('1bffffffffffffffff', 'overflows');
    refuses('62 c328', 'invalid UTF-8 string');
    refuses('9a00000401', 'exceeded max number of elements 1024');
    refuses(Buffer.from([0x9f, ...Array(1025).fill(0), 0xff]), 'exceeded max number of elements 1024');
    refuses('ba00000401', 'exceeded max number of key-value pairs 1024');
    refuses('0000', '1 bytes of extraneous data');
    refuses('83 01 02', 'unexpected EOF');
    refuses('ff', 'unexpected "break" code');
    refuses('1c', 'invalid additional information 28');
    refuses('7f 4161 ff', 'wrong element type for indefinite-length string');
  });
});
