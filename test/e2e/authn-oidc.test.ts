/**
 * Identity from outside the server: an OIDC issuer and a token webhook served over HTTPS on
 * loopback by the test (keys made with jose, certificates with openssl), and an authenticating
 * proxy presenting a client certificate of its own CA. Tokens are checked as go-oidc checks them
 * (issuer, audience, algorithms, expiry, signature), keys are refetched for an unknown kid, the
 * server keeps serving everyone else while the issuer is down, webhook verdicts are cached.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportSPKI } from 'jose';
import { createSA, expectStatus, sleep } from '../support/api.js';
import { clientCert, testCa, userFor, type TestCa } from '../support/certs.js';
import { kubectl, tokenKubeconfig } from '../support/kube-clients.js';
import { OidcIssuer } from '../support/oidc-issuer.js';
import { request, startServer, type Credentials, type HttpResponse, type TestServer } from '../support/server.js';
import { ReviewWebhook, type Review } from '../support/review-webhook.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('OIDC issuer, token webhook and authenticating proxy', () => {
  let server: TestServer;
  let work: string;
  let issuer: OidcIssuer;
  let webhook: ReviewWebhook;
  let proxyCa: TestCa;
  const secrets: string[] = [];

  const whoami = async (headers: Record<string, string>, credentials: Credentials | null = null): Promise<HttpResponse> =>
    request(server, '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST', credentials, headers, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
  const asToken = (token: string) => { secrets.push(token); return whoami({ authorization: `Bearer ${token}` }); };
  const claims = (extra: object = {}) => ({ sub: 'jane', aud: 'orch', groups: ['dev', 'ops'], hd: 'example.com', ...extra });

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'orch-oidc-'));
    issuer = await new OidcIssuer('idp').start();
    await issuer.addKey('k1', 'RS256');
    await issuer.addKey('k-ec', 'ES256');
    writeFileSync(join(work, 'idp-ca.crt'), issuer.ca.pem);
    webhook = await new ReviewWebhook('webhook', (review: Review) => {
      const token = review.spec.token as string;
      if (token === 'wh-good-token' || token === 'wh-retry-token') {
        return { authenticated: true, user: { username: 'webhook-user', uid: 'w-1', groups: ['wh'], extra: { 'example.com/x': ['1'] } }, audiences: review.spec.audiences };
      }
      if (token === 'wh-revoked-token') return { authenticated: false, error: 'the token was revoked' };
      return { authenticated: false };
    }).start();
    webhook.writeKubeconfig(join(work, 'webhook.kubeconfig'));
    proxyCa = testCa('front-proxy');
    writeFileSync(join(work, 'proxy-ca.crt'), proxyCa.pem);
    server = await startServer({
      args: [
        `--oidc-issuer-url=${issuer.url}`, '--oidc-client-id=orch', `--oidc-ca-file=${join(work, 'idp-ca.crt')}`,
        '--oidc-groups-claim=groups', '--oidc-groups-prefix=oidc:', '--oidc-required-claim=hd=example.com', '--oidc-signing-algs=RS256,ES256',
        `--authentication-token-webhook-config-file=${join(work, 'webhook.kubeconfig')}`, '--authentication-token-webhook-cache-ttl=1h',
        '--authentication-token-webhook-version=v1',
        `--requestheader-client-ca-file=${join(work, 'proxy-ca.crt')}`, '--requestheader-allowed-names=front-proxy',
        '--requestheader-username-headers=X-Remote-User', '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-', '--requestheader-uid-headers=X-Remote-Uid',
      ],
    });
    // the issuer's discovery runs in the background: wait until its tokens are accepted
    for (let i = 0; i < 400; i++) {
      if ((await asToken(await issuer.sign(claims()))).status === 201) break;
      await sleep(50);
    }
  });
  after(async () => {
    await server?.dispose();
    await issuer?.stop();
    await webhook?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  describe('OIDC', () => {
    it('maps sub (prefixed with the issuer) and groups (with the groups prefix)', async () => {
      const res = await asToken(await issuer.sign(claims()));
      expectStatus(res, 201, 'whoami');
      assert.deepEqual(res.json.status.userInfo, { username: `${issuer.url}#jane`, groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'] });
      const ec = await asToken(await issuer.sign(claims({ sub: 'ec-user' }), { kid: 'k-ec' }));
      expectStatus(ec, 201, 'ES256');
      assert.equal(ec.json.status.userInfo.username, `${issuer.url}#ec-user`);
    });

    it('works with kubectl and a token kubeconfig', async () => {
      const token = await issuer.sign(claims({ sub: 'kubectl-user' }));
      secrets.push(token);
      const run = await kubectl(tokenKubeconfig(server, join(work, 'oidc.kubeconfig'), token), work, ['auth', 'whoami', '-o', 'json']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(JSON.parse(run.stdout).status.userInfo.username, `${issuer.url}#kubectl-user`);
    });

    it('answers 401 to tokens that fail any check, and logs none of them', async () => {
      const now = Math.floor(Date.now() / 1000);
      const good = await issuer.sign(claims());
      const [h, p, s] = good.split('.');
      const publicPem = await exportSPKI(issuer.publicKey('k1'));
      const hs = `${b64url({ alg: 'HS256', kid: 'k1' })}.${b64url({ ...claims(), iss: issuer.url, exp: now + 600 })}`;
      const stranger = new OidcIssuer('stranger');
      const strangerKey = await stranger.addKey('k1');
      const bad: Record<string, string> = {
        'wrong audience': await issuer.sign(claims({ aud: 'someone-else' })),
        expired: await issuer.sign(claims({ iat: now - 7200, exp: now - 10 })),
        'not yet valid (beyond five minutes)': await issuer.sign(claims({ nbf: now + 900 })),
        'no expiry': await issuer.sign(claims({ exp: undefined })),
        'missing required claim': await issuer.sign(claims({ hd: undefined })),
        'wrong required claim': await issuer.sign(claims({ hd: 'evil.example' })),
        'wrong issuer': await issuer.sign(claims({ iss: 'https://other.example' })),
        'alg none': `${b64url({ alg: 'none', kid: 'k1' })}.${b64url({ ...claims(), iss: issuer.url, exp: now + 600 })}.`,
        'key confusion (HS256 with the RSA public key)': `${hs}.${createHmac('sha256', publicPem).update(hs).digest('base64url')}`,
        'signed by another key under a known kid': await issuer.sign(claims(), { key: strangerKey.privateKey }),
        tampered: `${h}.${b64url({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'admin' })}.${s}`,
        'tampered signature': `${h}.${p}.${s.slice(0, -6)}AAAAAA`,
        malformed: 'eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln',
        oversized: `${h}.${Buffer.alloc(9_000, 'b').toString('base64url')}.${s}`,
      };
      for (const [why, token] of Object.entries(bad)) {
        const res = await asToken(token);
        assert.equal(res.status, 401, `${why}: ${res.body}`);
      }
      await sleep(200);
      for (const reason of ['oidc: verify token: oidc: token is expired', 'oidc: required claim hd value does not match', 'oidc: required claim hd not present in ID token',
        'oidc: verify token: oidc: expected audience not in the token\'s audiences', 'failed to verify id token signature']) {
        assert.ok(server.logs.some((l) => l.includes(reason)), `logged: ${reason}`);
      }
      for (const token of secrets) {
        for (const line of server.logs) {
          assert.ok(!line.includes(token), `a token reached the log: ${line.slice(0, 200)}`);
          const sig = token.split('.')[2];
          if (sig && sig.length > 16) assert.ok(!line.includes(sig), `a signature reached the log: ${line.slice(0, 200)}`);
        }
      }
      assert.ok(server.logs.every((l) => !l.includes('evil.example')), 'no claim value reaches a log line');
    });

    it('fetches the key set again for a token naming a key it has not seen', async () => {
      await issuer.addKey('k2', 'RS256', false);
      const rotated = await issuer.sign(claims({ sub: 'rotated' }), { kid: 'k2' });
      await sleep(1100); // past the cool-down of the earlier tests' fetches, which would hold this refetch back
      const before = issuer.jwksFetches;
      expectStatus(await asToken(rotated), 401, 'unpublished key');
      assert.ok(issuer.jwksFetches > before, 'an unknown kid made the server refetch');
      issuer.publish('k2');
      await sleep(1100); // the refetch cool-down
      const res = await asToken(rotated);
      expectStatus(res, 201, 'after the issuer published the key');
      assert.equal(res.json.status.userInfo.username, `${issuer.url}#rotated`);
    });

    it('keeps serving everyone else, and this issuer\'s known keys, while the issuer is down', async () => {
      issuer.down = true;
      try {
        expectStatus(await asToken(await issuer.sign(claims({ sub: 'cached-key' }))), 201, 'a token under a key already fetched');
        await issuer.addKey('k3', 'RS256');
        await sleep(1100);
        expectStatus(await asToken(await issuer.sign(claims(), { kid: 'k3' })), 401, 'a new key cannot be fetched');
        await createSA(server, 'default', 'while-down');
        const sa = await request(server, '/api/v1/namespaces/default/serviceaccounts/while-down/token', { method: 'POST', body: { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: {} } });
        expectStatus(await asToken(sa.json.status.token), 201, 'service-account tokens');
        expectStatus(await whoami({}, userFor(server, 'carol')), 201, 'client certificates');
      } finally {
        issuer.down = false;
      }
    });
  });

  describe('token webhook', () => {
    it('asks the webhook over mutual TLS with a v1 TokenReview for the API\'s audiences, and caches the verdict', async () => {
      const res = await asToken('wh-good-token');
      expectStatus(res, 201, 'webhook user');
      assert.deepEqual(res.json.status.userInfo, { username: 'webhook-user', uid: 'w-1', groups: ['wh', 'system:authenticated'], extra: { 'example.com/x': ['1'] } });
      const asked = webhook.requests.filter((r) => r.spec.token === 'wh-good-token');
      assert.equal(asked.length, 1);
      assert.equal(asked[0].apiVersion, 'authentication.k8s.io/v1');
      assert.equal(asked[0].kind, 'TokenReview');
      assert.deepEqual(asked[0].spec.audiences, [server.url]);
      expectStatus(await asToken('wh-good-token'), 201, 'again');
      expectStatus(await request(server, '/version', { credentials: null, headers: { authorization: 'Bearer wh-good-token' } }), 200, 'and again');
      assert.equal(webhook.requests.filter((r) => r.spec.token === 'wh-good-token').length, 1, 'answered from the cache');
    });

    it('refuses what the webhook refuses, caching refusals too', async () => {
      expectStatus(await asToken('wh-revoked-token'), 401, 'revoked');
      expectStatus(await asToken('wh-revoked-token'), 401, 'revoked again');
      assert.equal(webhook.requests.filter((r) => r.spec.token === 'wh-revoked-token').length, 1);
      await sleep(100);
      assert.ok(server.logs.some((l) => l.includes('the token was revoked')));
    });

    it('retries a webhook that fails with 5xx', async () => {
      webhook.failures.push(500, 503);
      expectStatus(await asToken('wh-retry-token'), 201, 'after two failures');
      assert.equal(webhook.requests.filter((r) => r.spec.token === 'wh-retry-token').length, 3);
    });
  });

  describe('authenticating proxy', () => {
    let proxy: Credentials;
    let otherProxy: Credentials;
    before(() => {
      proxy = { ca: server.admin.ca, ...clientCert('front-proxy', '/CN=front-proxy', proxyCa.crt, proxyCa.key) };
      otherProxy = { ca: server.admin.ca, ...clientCert('other-proxy', '/CN=other-proxy', proxyCa.crt, proxyCa.key) };
    });

    it('takes the user from the headers of an allowed proxy, repeated headers apart, extra keys unescaped', async () => {
      const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        import('node:https').then(({ request: httpsRequest }) => {
          const req = httpsRequest(`${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
            method: 'POST', ca: proxy.ca, cert: proxy.cert, key: proxy.key, agent: false,
            headers: [
              'host', `127.0.0.1:${server.port}`, 'content-type', 'application/json',
              'X-Remote-User', 'alice', 'X-Remote-Uid', 'u-7', 'X-Remote-Group', 'a,b', 'X-Remote-Group', 'c',
              'X-Remote-Extra-Scopes', 's1', 'X-Remote-Extra-Scopes', 's2', 'X-Remote-Extra-Acme.io%2fTeam', 't',
            ] as unknown as Record<string, string>,
          }, (r) => {
            let body = '';
            r.on('data', (c: Buffer) => { body += c.toString(); });
            r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(body) }));
          });
          req.on('error', reject);
          req.end('{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}');
        }, reject);
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(res.body.status.userInfo, {
        username: 'alice', uid: 'u-7', groups: ['a,b', 'c', 'system:authenticated'], extra: { scopes: ['s1', 's2'], 'acme.io/team': ['t'] },
      });
    });

    it('ignores the headers from a proxy not allowed, from client certificates and from no certificate', async () => {
      const headers = { 'x-remote-user': 'mallory', 'x-remote-group': 'system:masters' };
      expectStatus(await whoami(headers, otherProxy), 401, 'a CN not allowed');
      const byClientCert = await whoami(headers, userFor(server, 'dave'));
      expectStatus(byClientCert, 201, 'a client certificate');
      assert.equal(byClientCert.json.status.userInfo.username, 'dave');
      expectStatus(await whoami(headers, null), 401, 'no certificate');
      expectStatus(await whoami({}, proxy), 401, 'the proxy itself names nobody without the headers');
    });
  });
});
