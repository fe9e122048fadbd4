/**
 * The token machinery under the authenticators: the Authorization header as Kubernetes splits
 * it, Go's CSV for the token file, the bounded token cache and its keys, audiences, the token
 * union and the request union (failures final, anonymous last, system:authenticated added),
 * bootstrap tokens. Properties (fast-check) for the parsing paths: nothing throws, nothing that
 * is not a token is accepted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { AnonymousAuthenticator } from '../../src/auth/authn/anonymous.js';
import { audienceAgnostic, intersect } from '../../src/auth/authn/audiences.js';
import { AuthenticationFailure, UnionAuthenticator, type AuthenticationRequest, type Authenticator } from '../../src/auth/authn/authenticator.js';
import { bearerToken, BearerTokenAuthenticator } from '../../src/auth/authn/bearer-token.js';
import { BootstrapTokenAuthenticator } from '../../src/auth/authn/bootstrap-token.js';
import { CsvError, parseCsv } from '../../src/auth/authn/csv.js';
import { ExpiringCache } from '../../src/auth/expiring-cache.js';
import { tokenKey } from '../../src/auth/authn/token-cache.js';
import { TokenFileAuthenticator } from '../../src/auth/authn/token-file.js';
import { BearerToken, TokenUnion, type TokenAuthenticator } from '../../src/auth/authn/token.js';
import type { KObject } from '../../src/api/meta.js';

const bt = (token: string) => new BearerToken(token);

const work = mkdtempSync(join(tmpdir(), 'orch-authn-unit-'));
after(() => rmSync(work, { recursive: true, force: true }));

const request = (headers: Record<string, string> = {}, path = '/api'): AuthenticationRequest => ({ socket: undefined, headers, path });

describe('the Authorization header', () => {
  it('reads the token as Kubernetes splits the header', () => {
    assert.equal(bearerToken('Bearer abc'), 'abc');
    assert.equal(bearerToken('bearer abc'), 'abc');
    assert.equal(bearerToken('BEARER abc  '), 'abc');
    assert.equal(bearerToken('  Bearer abc'), 'abc');
    assert.equal(bearerToken('Bearer a b'), 'a', 'a third part is ignored');
    assert.equal(bearerToken('Bearer  abc'), undefined, 'two spaces: an empty token, which is none');
    assert.equal(bearerToken('Bearer'), undefined);
    assert.equal(bearerToken('Basic abc'), undefined);
    assert.equal(bearerToken(''), undefined);
    assert.equal(bearerToken(undefined), undefined);
  });

  it('never throws, and what it returns is a space-free part of the header (property)', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (scheme, rest) => {
      const header = `${scheme} ${rest}`;
      const token = bearerToken(header);
      if (token !== undefined) {
        assert.ok(token.length > 0 && !token.includes(' '));
        assert.ok(header.includes(token));
        assert.equal(header.trim().split(' ')[0].toLowerCase(), 'bearer');
      }
    }), { numRuns: 500 });
  });

  it('answers "invalid bearer token" when no method accepts it, and nothing without a bearer header', async () => {
    const none = new BearerTokenAuthenticator(new TokenUnion([]), []);
    assert.deepEqual(await none.authenticate(request({ authorization: 'Bearer x' })), new AuthenticationFailure('invalid bearer token'));
    assert.equal(await none.authenticate(request({})), undefined);
    assert.equal(await none.authenticate(request({ authorization: 'Basic x' })), undefined);
  });
});

describe('Go CSV', () => {
  it('reads quoted fields, doubled quotes, CRLF and skips empty lines', () => {
    assert.deepEqual(parseCsv('a,b,c\r\n\n"d,e","f""g",\n'), [['a', 'b', 'c'], ['d,e', 'f"g', '']]);
    assert.deepEqual(parseCsv('"multi\nline",x'), [['multi\nline', 'x']]);
  });

  it('refuses a bare quote and an unterminated quoted field', () => {
    assert.throws(() => parseCsv('a"b,c'), CsvError);
    assert.throws(() => parseCsv('"abc'), CsvError);
    assert.throws(() => parseCsv('"a"b,c'), CsvError);
  });

  it('reads back what Go writes (property)', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', ' ', '\n', 'é') });
    const goField = (f: string) => (/[",\n\r]/.test(f) || f.startsWith(' ') ? `"${f.replaceAll('"', '""')}"` : f);
    fc.assert(fc.property(fc.array(fc.array(field, { minLength: 1, maxLength: 4 }), { maxLength: 5 }), (records) => {
      // Go skips a record that is one empty field (an empty line)
      const written = records.filter((r) => !(r.length === 1 && r[0] === ''));
      const text = written.map((r) => r.map(goField).join(',')).join('\n');
      assert.deepEqual(parseCsv(text), written);
    }), { numRuns: 300 });
  });

  it('never throws anything but a CsvError (property)', () => {
    fc.assert(fc.property(fc.string(), (text) => {
      try { parseCsv(text); } catch (err) { assert.ok(err instanceof CsvError, String(err)); }
    }), { numRuns: 500 });
  });
});

describe('the static token file', () => {
  it('maps tokens to users with groups; warns on empty and repeated tokens without naming them', () => {
    const file = join(work, 'tokens.csv');
    writeFileSync(file, 's3cret,alice,uid-1,"dev,ops"\nother,bob,uid-2\n,nobody,uid-3\ns3cret,alice2,uid-4,admins\n');
    const warnings: string[] = [];
    const auth = TokenFileAuthenticator.load(file, (m) => warnings.push(m));
    assert.deepEqual(auth.authenticateToken(bt('s3cret')), { user: { name: 'alice2', uid: 'uid-4', groups: ['admins'] } });
    assert.deepEqual(auth.authenticateToken(bt('other')), { user: { name: 'bob', uid: 'uid-2', groups: [] } });
    assert.equal(auth.authenticateToken(bt('nope')), undefined);
    assert.equal(auth.authenticateToken(bt('')), undefined);
    assert.deepEqual(warnings, [
      `empty token has been found in token file '${file}', record number '3'`,
      `duplicate token has been found in token file '${file}', record number '4'`,
    ]);
    assert.ok(warnings.every((w) => !w.includes('s3cret')));
  });

  it('refuses a record with fewer than three columns, naming the file', () => {
    const file = join(work, 'short.csv');
    writeFileSync(file, 'token,user\n');
    assert.throws(() => TokenFileAuthenticator.load(file, () => {}), { message: `token file '${file}' must have at least 3 columns (token, user name, user uid), found 2` });
  });
});

describe('the token cache', () => {
  it('keys tokens by an HMAC that holds nothing of the token, and by audiences', () => {
    const token = 'eyJhbGciOiJSUzI1NiJ9.payload.signature';
    const key = tokenKey(token);
    assert.ok(!key.includes('payload') && !key.includes('signature'));
    assert.equal(tokenKey(token), key);
    assert.notEqual(tokenKey(token, ['a']), key);
    assert.notEqual(tokenKey(token, ['a', 'b']), tokenKey(token, ['ab']));
    assert.notEqual(tokenKey(`${token}x`), key);
  });

  it('expires entries and evicts the least recently used past its capacity', () => {
    let now = 0;
    const cache = new ExpiringCache<string>(2, () => now);
    cache.set('a', 'A', 100);
    cache.set('b', 'B', 100);
    assert.equal(cache.get('a'), 'A'); // a is now the most recent
    cache.set('c', 'C', 100);
    assert.equal(cache.get('b'), undefined, 'b was least recently used');
    assert.equal(cache.get('a'), 'A');
    now = 100;
    assert.equal(cache.get('a'), undefined, 'expired');
    cache.set('d', 'D', 0);
    assert.equal(cache.get('d'), undefined, 'a zero TTL caches nothing');
    assert.ok(cache.size <= 2);
  });
});

describe('audiences', () => {
  it('intersects in the first list\'s order, without repeats', () => {
    assert.deepEqual(intersect(['a', 'b', 'a', 'c'], ['c', 'a']), ['a', 'c']);
    assert.deepEqual(intersect(['a'], []), []);
  });

  it('lets a method that knows no audiences answer only for the API\'s', async () => {
    const method: TokenAuthenticator = { name: 'm', authenticateToken: () => ({ user: { name: 'u', groups: [] } }) };
    const wrapped = audienceAgnostic(['api'], method);
    assert.deepEqual(await wrapped.authenticateToken(bt('t'), ['api', 'other']), { user: { name: 'u', groups: [] }, audiences: ['api'] });
    assert.equal(await wrapped.authenticateToken(bt('t'), ['other']), undefined);
    assert.deepEqual(await wrapped.authenticateToken(bt('t'), []), { user: { name: 'u', groups: [] } });
  });
});

describe('the unions', () => {
  const accept = (name: string): Authenticator => ({ name, authenticate: () => ({ user: { name, groups: [] } }) });
  const refuse = (reason: string): Authenticator => ({ name: reason, authenticate: () => new AuthenticationFailure(reason) });
  const pass: Authenticator = { name: 'pass', authenticate: () => undefined };

  it('takes the first method that accepts, even after another refused, adding system:authenticated', async () => {
    const union = new UnionAuthenticator([pass, refuse('bad proxy cert'), accept('alice')]);
    assert.deepEqual(await union.authenticate(request()), { name: 'alice', groups: ['system:authenticated'] });
  });

  it('makes a refusal final: never anonymous, and reported for the log', async () => {
    const reported: string[] = [];
    const union = new UnionAuthenticator([refuse('a'), refuse('b')], { anonymous: new AnonymousAuthenticator(), onFailure: (f) => reported.push(f.reason) });
    await assert.rejects(async () => union.authenticate(request()), { code: 401, message: 'Unauthorized' });
    assert.deepEqual(reported, ['[a, b]']);
  });

  it('asks the anonymous authenticator last, on its paths only', async () => {
    const union = new UnionAuthenticator([pass], { anonymous: new AnonymousAuthenticator(['/healthz']) });
    assert.deepEqual(await union.authenticate(request({}, '/healthz')), { name: 'system:anonymous', groups: ['system:unauthenticated'] });
    await assert.rejects(async () => union.authenticate(request({}, '/healthz/')), { code: 401 });
    await assert.rejects(async () => new UnionAuthenticator([pass]).authenticate(request()), { code: 401 });
  });

  it('aggregates token failures and skips methods that do not recognise a token', async () => {
    const union = new TokenUnion([
      { name: 'x', authenticateToken: () => undefined },
      { name: 'y', authenticateToken: () => new AuthenticationFailure('expired') },
      { name: 'z', authenticateToken: () => new AuthenticationFailure('bad signature') },
    ]);
    assert.deepEqual(await union.authenticateToken(bt('t'), []), new AuthenticationFailure('[expired, bad signature]'));
    assert.equal(await new TokenUnion([]).authenticateToken(bt('t'), []), undefined);
  });
});

describe('bootstrap tokens', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  let now = Date.parse('2026-01-01T00:00:00Z');
  const secrets = new Map<string, KObject>();
  const auth = new BootstrapTokenAuthenticator({ secret: (ns, name) => secrets.get(`${ns}/${name}`) }, () => now);
  const put = (data: Record<string, string>, extra: Partial<KObject> = {}) => secrets.set('orch-system/bootstrap-token-abcdef', {
    metadata: { name: 'bootstrap-token-abcdef', namespace: 'orch-system' }, type: 'bootstrap.orch.io/token',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])), ...extra,
  });
  const good = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', expiration: '2026-01-02T00:00:00Z' };

  it('names the user after the token id, in system:bootstrappers and the valid extra groups, sorted', () => {
    put({ ...good, 'auth-extra-groups': 'system:bootstrappers:nodes,system:bootstrappers:a' });
    assert.deepEqual(auth.authenticateToken(bt('abcdef.0123456789abcdef')), {
      user: { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:nodes'] },
    });
  });

  it('does not recognise a token whose Secret is wrong in any way', () => {
    const token = 'abcdef.0123456789abcdef';
    for (const [why, data, extra] of [
      ['wrong secret', { ...good, 'token-secret': 'ffffffffffffffff' }, {}],
      ['expired', { ...good, expiration: '2025-12-31T23:59:59Z' }, {}],
      ['unreadable expiration', { ...good, expiration: 'tomorrow' }, {}],
      ['not for authentication', { ...good, 'usage-bootstrap-authentication': 'false' }, {}],
      ['bad extra group', { ...good, 'auth-extra-groups': 'system:masters' }, {}],
      ['wrong type', good, { type: 'Opaque' }],
      ['being deleted', good, { metadata: { name: 'bootstrap-token-abcdef', namespace: 'orch-system', deletionTimestamp: '2026-01-01T00:00:00Z' } }],
    ] as [string, Record<string, string>, Partial<KObject>][]) {
      put(data, extra);
      assert.equal(auth.authenticateToken(bt(token)), undefined, why);
    }
    put(good);
    assert.equal(auth.authenticateToken(bt('abcdef.0123456789abcdeF')), undefined, 'upper case is not a token');
    assert.equal(auth.authenticateToken(bt('abcdeg.0123456789abcdef')), undefined, 'no such Secret');
    now = Date.parse('2026-01-03T00:00:00Z');
    assert.equal(auth.authenticateToken(bt(token)), undefined, 'past its expiration');
  });

  it('recognises nothing but <6>.<16> lower-case alphanumerics (property)', () => {
    put(good);
    now = Date.parse('2026-01-01T00:00:00Z');
    fc.assert(fc.property(fc.string(), (token) => {
      const result = auth.authenticateToken(bt(token));
      if (result !== undefined) assert.equal(token, 'abcdef.0123456789abcdef');
    }), { numRuns: 500 });
  });
});
