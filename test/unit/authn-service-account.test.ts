/**
 * Service-account tokens end to end in process: tokens signed by the generator (jose), then
 * verified by the authenticator against keys, issuers, audiences, times and the objects in a
 * lookup; every malformed, forged or stale token refused. Properties: arbitrary strings and
 * tampered tokens never authenticate and never throw.
 */
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SignJWT } from 'jose';
import { AuthenticationFailure } from '../../src/auth/authn/authenticator.js';
import { ServiceAccountTokenAuthenticator } from '../../src/auth/authn/service-account/authenticator.js';
import { legacyIssuer } from '../../src/auth/authn/service-account/claims.js';
import { jwks } from '../../src/auth/authn/service-account/issuer-discovery.js';
import { algorithmOf, keyId, publicKeysFromPem, type SigningKey } from '../../src/auth/authn/service-account/keys.js';
import { ServiceAccountTokenGenerator } from '../../src/auth/authn/service-account/token-generator.js';
import { BoundTokenValidator, LegacyTokenValidator } from '../../src/auth/authn/service-account/validators.js';
import type { KObject } from '../../src/api/meta.js';
import { BearerToken } from '../../src/auth/authn/token.js';

const bt = (token: string) => new BearerToken(token);

const issuer = 'https://orch.test';
const api = [issuer];

function signingKey(type: 'rsa' | 'ec' = 'rsa'): SigningKey {
  const pair = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { key: pair.publicKey, privateKey: pair.privateKey, kid: keyId(pair.publicKey), alg: algorithmOf(pair.publicKey) as string };
}

const objects = new Map<string, KObject>();
const lookup = {
  serviceAccount: (ns: string, name: string) => objects.get(`sa/${ns}/${name}`),
  secret: (ns: string, name: string) => objects.get(`secret/${ns}/${name}`),
};
const sa = (name: string, uid: string, meta: Partial<KObject['metadata']> = {}): KObject => {
  const obj = { metadata: { name, namespace: 'ns', uid, ...meta } };
  objects.set(`sa/ns/${name}`, obj);
  return obj;
};

const rsa = signingKey('rsa');
const ec = signingKey('ec');
const generator = new ServiceAccountTokenGenerator({ key: rsa, issuer, apiAudiences: api, maxExpirationSeconds: 0, lookup });
const ecGenerator = new ServiceAccountTokenGenerator({ key: ec, issuer, apiAudiences: api, maxExpirationSeconds: 0, lookup });
let clock = Date.now();
const authenticator = new ServiceAccountTokenAuthenticator({
  name: 'sa', issuers: [issuer, 'https://old.test'], keys: [rsa, ec], implicitAudiences: api, validator: new BoundTokenValidator(lookup), now: () => clock,
});
const legacy = (checkObjects: boolean) => new ServiceAccountTokenAuthenticator({
  name: 'legacy', issuers: [legacyIssuer], keys: [rsa], implicitAudiences: api, validator: new LegacyTokenValidator(lookup, checkObjects), now: () => clock,
});

const issue = (serviceAccount: KObject, o: { audiences?: string[]; seconds?: number; ref?: object; now?: number } = {}) =>
  generator.issue({ serviceAccount, audiences: o.audiences ?? api, expirationSeconds: o.seconds ?? 3600, now: o.now ?? clock, boundObjectRef: o.ref });

function refused(result: unknown, reason?: string | RegExp): void {
  assert.ok(result === undefined || result instanceof AuthenticationFailure, `expected a refusal, got ${JSON.stringify(result)}`);
  if (reason !== undefined) {
    assert.ok(result instanceof AuthenticationFailure, 'expected a failure, not an unrecognised token');
    if (typeof reason === 'string') assert.equal(result.reason, reason); else assert.match(result.reason, reason);
  }
}

describe('keys', () => {
  it('derives kid as kube-apiserver does and reads keys from public, private and certificate PEM', () => {
    const pem = rsa.key.export({ type: 'spki', format: 'pem' }) as string;
    const priv = ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const keys = publicKeysFromPem(`${pem}\n${priv}`, 'test');
    assert.deepEqual(keys.map((k) => [k.kid, k.alg]), [[rsa.kid, 'RS256'], [ec.kid, 'ES256']]);
    assert.match(rsa.kid, /^[A-Za-z0-9_-]{43}$/);
    assert.throws(() => publicKeysFromPem('nothing', 'file.pem'), /file\.pem: data does not contain any valid RSA or ECDSA public keys/);
    const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }) as string;
    assert.throws(() => publicKeysFromPem(ed, 'ed.pem'), /only RSA and ECDSA/);
  });

  it('publishes a JWKS with use, kid and alg', () => {
    const [r, e] = jwks([rsa, ec]).keys;
    assert.deepEqual(Object.keys(r), ['use', 'kty', 'kid', 'alg', 'n', 'e']);
    assert.deepEqual({ kid: e.kid, kty: e.kty, crv: e.crv, alg: e.alg }, { kid: ec.kid, kty: 'EC', crv: 'P-256', alg: 'ES256' });
  });
});

describe('bound tokens', () => {
  it('carries Kubernetes\' claims with the orch.io private claim, and authenticates the account', async () => {
    const robot = sa('robot', 'uid-1');
    const token = await issue(robot);
    const [header, payload] = token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    assert.deepEqual(header, { alg: 'RS256', kid: rsa.kid });
    assert.deepEqual(Object.keys(payload).sort(), ['aud', 'exp', 'iat', 'iss', 'jti', 'nbf', 'orch.io', 'sub']);
    assert.deepEqual(payload['orch.io'], { namespace: 'ns', serviceaccount: { name: 'robot', uid: 'uid-1' } });
    assert.equal(payload.exp - payload.iat, 3600);
    const result = await authenticator.authenticateToken(bt(token), api);
    assert.deepEqual(result, {
      user: {
        name: 'system:serviceaccount:ns:robot', uid: 'uid-1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
        extra: { 'authentication.orch.io/credential-id': [`JTI=${payload.jti}`] },
      },
      audiences: api,
    });
    const ecToken = await ecGenerator.issue({ serviceAccount: robot, audiences: api, expirationSeconds: 600, now: clock });
    assert.equal((await authenticator.authenticateToken(bt(ecToken), api) as { user: { name: string } }).user.name, 'system:serviceaccount:ns:robot');
  });

  it('is good for the audiences asked that it names; others are refused', async () => {
    const token = await issue(sa('aud', 'uid-a'), { audiences: ['vault', issuer] });
    assert.deepEqual((await authenticator.authenticateToken(bt(token), ['vault']) as { audiences: readonly string[] }).audiences, ['vault']);
    refused(await authenticator.authenticateToken(bt(token), ['other']), 'token audiences ["vault" "https://orch.test"] is invalid for the target audiences ["other"]');
  });

  it('refuses expired tokens and tokens not yet valid, with a minute of leeway', async () => {
    const robot = sa('time', 'uid-t');
    const start = clock;
    const token = await issue(robot, { seconds: 600 });
    clock = start + 630_000; // 30 s past expiry: within leeway
    assert.ok(!((await authenticator.authenticateToken(bt(token), api)) instanceof AuthenticationFailure));
    clock = start + 661_000;
    refused(await authenticator.authenticateToken(bt(token), api), 'service account token has expired');
    clock = start;
    const future = await issue(robot, { now: start + 120_000 });
    refused(await authenticator.authenticateToken(bt(future), api), 'service account token is not valid yet');
  });

  it('stops working at once when its account is deleted or replaced, though its claims are cached', async () => {
    sa('gone', 'uid-g');
    const token = await issue(objects.get('sa/ns/gone') as KObject);
    assert.ok(!((await authenticator.authenticateToken(bt(token), api)) instanceof AuthenticationFailure));
    objects.delete('sa/ns/gone');
    refused(await authenticator.authenticateToken(bt(token), api), 'serviceaccounts "gone" not found');
    sa('gone', 'uid-other');
    refused(await authenticator.authenticateToken(bt(token), api), 'service account UID (uid-other) does not match claim (uid-g)');
    sa('gone', 'uid-g', { deletionTimestamp: new Date(clock - 120_000).toISOString() });
    refused(await authenticator.authenticateToken(bt(token), api), 'service account ns/gone has been deleted');
    sa('gone', 'uid-g', { deletionTimestamp: new Date(clock - 10_000).toISOString() });
    assert.ok(!((await authenticator.authenticateToken(bt(token), api)) instanceof AuthenticationFailure), 'deleted within the last minute: still valid');
  });

  it('binds to a Secret: the token dies with it, or when it is replaced', async () => {
    const robot = sa('bound', 'uid-b');
    objects.set('secret/ns/s1', { metadata: { name: 's1', namespace: 'ns', uid: 'sec-1' } });
    const token = await issue(robot, { ref: { kind: 'Secret', apiVersion: 'v1', name: 's1' } });
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    assert.deepEqual(claims['orch.io'].secret, { name: 's1', uid: 'sec-1' });
    assert.ok(!((await authenticator.authenticateToken(bt(token), api)) instanceof AuthenticationFailure));
    objects.set('secret/ns/s1', { metadata: { name: 's1', namespace: 'ns', uid: 'sec-2' } });
    refused(await authenticator.authenticateToken(bt(token), api), 'secret UID (sec-2) does not match service account secret ref claim (sec-1)');
    objects.delete('secret/ns/s1');
    refused(await authenticator.authenticateToken(bt(token), api), 'service account token has been invalidated');
  });

  it('refuses to bind to a missing Secret, another UID, or a kind it cannot bind', async () => {
    const robot = sa('binder', 'uid-x');
    objects.set('secret/ns/s2', { metadata: { name: 's2', namespace: 'ns', uid: 'sec-9' } });
    await assert.rejects(issue(robot, { ref: { kind: 'Secret', apiVersion: 'v1', name: 'nope' } }), { code: 404, message: 'secrets "nope" not found' });
    await assert.rejects(issue(robot, { ref: { kind: 'Secret', apiVersion: 'v1', name: 's2', uid: 'old' } }), {
      code: 409, message: 'Operation cannot be fulfilled on Secret "s2": the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated',
    });
    await assert.rejects(issue(robot, { ref: { kind: 'ConfigMap', apiVersion: 'v1', name: 'c' } }), {
      code: 400, message: 'cannot bind token for serviceaccount "binder" to object of type /v1, Kind=ConfigMap',
    });
    await assert.rejects(issue(robot, { ref: { kind: 'Pod', apiVersion: 'v1', name: 'p' } }), { code: 404, message: 'pods "p" not found' });
  });
});

describe('forged and malformed tokens', () => {
  const robot = sa('target', 'uid-target');
  const now = () => Math.floor(clock / 1000);
  const claims = () => ({ iss: issuer, sub: 'system:serviceaccount:ns:target', aud: api, iat: now(), nbf: now(), exp: now() + 600, 'orch.io': { namespace: 'ns', serviceaccount: { name: 'target', uid: 'uid-target' } } });
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

  it('refuses alg none, key confusion (HS256 keyed with the RSA public key), tampering, unknown keys and foreign issuers', async () => {
    const good = await issue(robot);
    assert.ok(!((await authenticator.authenticateToken(bt(good), api)) instanceof AuthenticationFailure));
    const [h, p, s] = good.split('.');

    refused(await authenticator.authenticateToken(bt(`${b64({ alg: 'none' })}.${b64(claims())}.`), api));
    const hmacKey = rsa.key.export({ type: 'spki', format: 'pem' }) as string;
    const hs = `${b64({ alg: 'HS256', kid: rsa.kid })}.${b64(claims())}`;
    refused(await authenticator.authenticateToken(bt(`${hs}.${createHmac('sha256', hmacKey).update(hs).digest('base64url')}`), api));
    const elevated = b64({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'system:serviceaccount:ns:admin' });
    refused(await authenticator.authenticateToken(bt(`${h}.${elevated}.${s}`), api), /signature verification failed/);
    refused(await authenticator.authenticateToken(bt(`${h}.${p}.${s.slice(0, -4)}AAAA`), api), /signature verification failed/);
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey as KeyObject;
    const unknownKid = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'not-ours' }).sign(stranger);
    refused(await authenticator.authenticateToken(bt(unknownKid), api), /signature verification failed/);
    const foreign = await new SignJWT({ ...claims(), iss: 'https://evil.test' }).setProtectedHeader({ alg: 'RS256', kid: rsa.kid }).sign(rsa.privateKey);
    assert.equal(await authenticator.authenticateToken(bt(foreign), api), undefined, 'another issuer\'s token is not this method\'s');
    const noKid = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey);
    assert.ok(!((await authenticator.authenticateToken(bt(noKid), api)) instanceof AuthenticationFailure), 'no kid: every key is tried');
    const oldIssuer = await new SignJWT({ ...claims(), iss: 'https://old.test' }).setProtectedHeader({ alg: 'RS256', kid: rsa.kid }).sign(rsa.privateKey);
    assert.ok(!((await authenticator.authenticateToken(bt(oldIssuer), api)) instanceof AuthenticationFailure), 'every --service-account-issuer is accepted');
  });

  it('never throws and never authenticates arbitrary strings or tampered tokens (property)', async () => {
    const good = await issue(robot);
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 2000 }), async (text) => {
      refused(await authenticator.authenticateToken(bt(text), api));
    }), { numRuns: 300 });
    await fc.assert(fc.asyncProperty(fc.nat({ max: good.length - 1 }), fc.constantFrom(...'ABCDEFabcdef012345-_.='), async (at, ch) => {
      fc.pre(good[at] !== ch);
      const tampered = good.slice(0, at) + ch + good.slice(at + 1);
      const result = await authenticator.authenticateToken(bt(tampered), api);
      // a change to the base64 padding bits of the signature's last character can leave its bytes intact
      if (!(result === undefined || result instanceof AuthenticationFailure)) assert.equal(Buffer.from(tampered.split('.')[2], 'base64url').equals(Buffer.from(good.split('.')[2], 'base64url')), true);
    }), { numRuns: 300 });
    await fc.assert(fc.asyncProperty(fc.jsonValue(), fc.jsonValue(), async (header, payload) => {
      refused(await authenticator.authenticateToken(bt(`${b64({ h: header })}.${b64({ p: payload, iss: issuer })}.c2ln`), api));
    }), { numRuns: 200 });
  });
});

describe('legacy Secret-based tokens', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  it('authenticate while the Secret holds that very token and the account is unchanged', async () => {
    const owner = sa('old', 'uid-old');
    const token = await generator.legacyToken(owner, 'old-token');
    const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    assert.equal(payload.iss, 'orch.io/serviceaccount');
    assert.equal(payload.exp, undefined);
    objects.set('secret/ns/old-token', { metadata: { name: 'old-token', namespace: 'ns', uid: 's' }, data: { token: b64(token) } });
    assert.deepEqual((await legacy(true).authenticateToken(bt(token), api) as { user: object }).user, {
      name: 'system:serviceaccount:ns:old', uid: 'uid-old', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
    });
    objects.set('secret/ns/old-token', { metadata: { name: 'old-token', namespace: 'ns', uid: 's' }, data: { token: b64('another') } });
    refused(await legacy(true).authenticateToken(bt(token), api), "token does not match server's copy");
    objects.set('secret/ns/old-token', { metadata: { name: 'old-token', namespace: 'ns', uid: 's', labels: { 'orch.io/legacy-token-invalid-since': '2026-01-01' } }, data: { token: b64(token) } });
    refused(await legacy(true).authenticateToken(bt(token), api), 'token has been invalidated');
    objects.delete('secret/ns/old-token');
    refused(await legacy(true).authenticateToken(bt(token), api), 'token has been invalidated');
    assert.ok(!((await legacy(false).authenticateToken(bt(token), api)) instanceof AuthenticationFailure), 'without lookup the claims are trusted');
    sa('old', 'uid-new');
    objects.set('secret/ns/old-token', { metadata: { name: 'old-token', namespace: 'ns', uid: 's' }, data: { token: b64(token) } });
    refused(await legacy(true).authenticateToken(bt(token), api), 'ServiceAccount UID (uid-new) does not match claim (uid-old)');
  });
});
