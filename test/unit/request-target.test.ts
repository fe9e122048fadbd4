/** The request target as sent: split into path and query, segments decoded one by one, never resolved. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseRequestTarget, pathSegments } from '../../src/http/request-target.js';
import { StatusError } from '../../src/status/status-error.js';

describe('parseRequestTarget', () => {
  it('keeps dot segments and escapes as sent', () => {
    const t = parseRequestTarget('/api/v1/namespaces/n/secrets/%2e%2e/../x?labelSelector=a%3Db&limit=1#frag');
    assert.equal(t.pathname, '/api/v1/namespaces/n/secrets/%2e%2e/../x');
    assert.deepEqual([...t.searchParams], [['labelSelector', 'a=b'], ['limit', '1']]);
  });

  it('takes the path of an absolute-form target, and / for none', () => {
    assert.equal(parseRequestTarget('https://host:6443/api/v1?x=1').pathname, '/api/v1');
    assert.equal(parseRequestTarget('https://host').pathname, '/');
    assert.equal(parseRequestTarget(undefined).pathname, '/');
    assert.equal(parseRequestTarget('*').pathname, '/*');
  });
});

describe('pathSegments', () => {
  it('decodes each segment on its own, so an escaped slash stays inside it', () => {
    assert.deepEqual(pathSegments('/api/v1/namespaces/a%2Fb/secrets/%2e%2e/'), ['api', 'v1', 'namespaces', 'a/b', 'secrets', '..']);
    assert.deepEqual(pathSegments('/x/%C4%80/%c4%80'), ['x', 'Ā', 'Ā']);
  });

  it('reads raw bytes (Latin-1 characters from Node) as UTF-8, and bad UTF-8 as U+FFFD', () => {
    assert.deepEqual(pathSegments('/\u00c4\u0080/%C0'), ['Ā', '\ufffd']);
  });

  it('refuses a malformed escape with 400', () => {
    for (const bad of ['/a%zz', '/a%', '/a%4']) {
      assert.throws(() => pathSegments(bad), (e: unknown) => e instanceof StatusError && e.code === 400 && e.message.includes('invalid URL escape'));
    }
  });

  it('a whole path decodes as its segments do one by one (the plain-path shortcut changes nothing)', () => {
    const piece = fc.constantFrom('/', '//', 'a', 'v1', '%41', '%2F', '%2e', '\u00c4\u0080', 'é', '.', '..', ' ', '~');
    fc.assert(fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const path = pieces.join('');
      const trimmed = path.replace(/^\/+|\/+$/g, '');
      assert.deepEqual(pathSegments(path), trimmed.split('/').map((segment) => pathSegments(`/${segment}`)[0]));
    }), { numRuns: 500 });
  });
});
