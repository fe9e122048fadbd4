/**
 * Bearer tokens against a real server: the static token file, service-account tokens from the
 * TokenRequest API (kubectl create token, a bound Secret, deletion), legacy token Secrets,
 * bootstrap tokens, TokenReview and SelfSubjectReview under both group names, the issuer's OpenID
 * discovery verified by jose as a relying party would, real kubectl with token, exec and
 * client-certificate kubeconfigs, @kubernetes/client-node, and bad tokens: each a 401, none of
 * them ever in a log line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AuthenticationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createLocalJWKSet, jwtVerify, SignJWT } from 'jose';
import WebSocket from 'ws';
import { createSA, expectStatus, sleep } from '../support/api.js';
import { userFor } from '../support/certs.js';
import { certKubeconfig, execKubeconfig, kubectl, tokenKubeconfig } from '../support/kube-clients.js';
import { mainScript, request, startServer, type HttpResponse, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('bearer tokens', () => {
  let server: TestServer;
  let work: string;
  /** every token a test presented that must never be logged */
  const secrets: string[] = [];

  const asToken = (path: string, token: string, o: { method?: string; body?: object; headers?: Record<string, string> } = {}): Promise<HttpResponse> =>
    request(server, path, { credentials: null, ...o, headers: { authorization: `Bearer ${token}`, ...o.headers } });
  const whoami = async (token: string, group = 'authentication.k8s.io') => {
    const res = await asToken(`/apis/${group}/v1/selfsubjectreviews`, token, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'SelfSubjectReview' } });
    expectStatus(res, 201, 'SelfSubjectReview');
    return res.json.status.userInfo;
  };
  const tokenFor = async (ns: string, sa: string, spec: object = {}, apiVersion = 'authentication.orch.io/v1'): Promise<HttpResponse> =>
    request(server, `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, { method: 'POST', body: { apiVersion, kind: 'TokenRequest', spec } });

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'orch-authn-'));
    writeFileSync(join(work, 'tokens.csv'), 'static-token-0123456789,alice,uid-alice,"dev,ops"\n');
    server = await startServer({
      args: ['--token-auth-file', join(work, 'tokens.csv'), '--enable-bootstrap-token-auth', '--service-account-max-token-expiration=2h'],
    });
  });
  after(async () => {
    await server?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  it('authenticates a static token file user, with uid and groups', async () => {
    secrets.push('static-token-0123456789');
    assert.deepEqual(await whoami('static-token-0123456789'), { username: 'alice', uid: 'uid-alice', groups: ['dev', 'ops', 'system:authenticated'] });
    assert.deepEqual(await whoami('static-token-0123456789', 'authentication.orch.io'), { username: 'alice', uid: 'uid-alice', groups: ['dev', 'ops', 'system:authenticated'] });
    const res = await asToken('/api/v1/namespaces/default/serviceaccounts', 'static-token-0123456789');
    expectStatus(res, 200, 'list as alice');
  });

  it('issues service-account tokens through TokenRequest, answering in the group the body named', async () => {
    await createSA(server, 'default', 'robot');
    for (const apiVersion of ['authentication.orch.io/v1', 'authentication.k8s.io/v1']) {
      const res = await tokenFor('default', 'robot', {}, apiVersion);
      expectStatus(res, 201, 'TokenRequest');
      const { token, expirationTimestamp } = res.json.status;
      secrets.push(token);
      assert.equal(res.json.apiVersion, apiVersion);
      assert.equal(res.json.kind, 'TokenRequest');
      assert.equal(res.json.metadata.name, 'robot');
      assert.equal(res.json.metadata.namespace, 'default');
      assert.deepEqual(res.json.spec, { audiences: [server.url], expirationSeconds: 3600, boundObjectRef: null });
      assert.ok(Math.abs(Date.parse(expirationTimestamp) - Date.now() - 3_600_000) < 120_000);
      const user = await whoami(token);
      assert.equal(user.username, 'system:serviceaccount:default:robot');
      assert.deepEqual(user.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
      assert.match(user.extra['authentication.orch.io/credential-id'][0], /^JTI=[0-9a-f-]{36}$/);
    }
  });

  it('applies TokenRequest\'s bounds: at least 10 minutes, shortened to the maximum with a warning', async () => {
    const short = await tokenFor('default', 'robot', { expirationSeconds: 60 });
    expectStatus(short, 422, 'too short');
    assert.equal(short.json.message, 'TokenRequest.authentication.orch.io "robot" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
    const long = await tokenFor('default', 'robot', { expirationSeconds: 86400 });
    expectStatus(long, 201, 'long');
    assert.equal(long.json.spec.expirationSeconds, 7200);
    assert.equal(long.headers.warning, '299 - "requested expiration of 86400 seconds shortened to 7200 seconds"');
    secrets.push(long.json.status.token);
    expectStatus(await tokenFor('default', 'nobody'), 404, 'no such account');
    const mismatch = await request(server, '/api/v1/namespaces/default/serviceaccounts/robot/token', {
      method: 'POST', body: { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', metadata: { name: 'other' }, spec: {} },
    });
    expectStatus(mismatch, 422, 'name mismatch');
    assert.match(mismatch.json.message, /metadata\.name: Invalid value: "other": must match the service account name if specified/);
    expectStatus(await request(server, '/api/v1/namespaces/default/serviceaccounts/robot/token'), 405, 'GET on the token subresource');
  });

  it('stops a token the moment its ServiceAccount is deleted, or its bound Secret', async () => {
    await createSA(server, 'default', 'doomed');
    const token = (await tokenFor('default', 'doomed')).json.status.token;
    secrets.push(token);
    expectStatus(await asToken('/version', token), 200, 'before');
    expectStatus(await request(server, '/api/v1/namespaces/default/serviceaccounts/doomed', { method: 'DELETE' }), 200, 'delete sa');
    expectStatus(await asToken('/version', token), 401, 'after the account is gone');

    await createSA(server, 'default', 'binder');
    expectStatus(await request(server, '/api/v1/namespaces/default/secrets', { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'anchor' } } }), 201, 'secret');
    const bound = await tokenFor('default', 'binder', { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'anchor' } });
    expectStatus(bound, 201, 'bound token');
    secrets.push(bound.json.status.token);
    expectStatus(await asToken('/version', bound.json.status.token), 200, 'bound, before');
    expectStatus(await request(server, '/api/v1/namespaces/default/secrets/anchor', { method: 'DELETE' }), 200, 'delete secret');
    expectStatus(await asToken('/version', bound.json.status.token), 401, 'bound, after');
    const missing = await tokenFor('default', 'binder', { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'anchor' } });
    expectStatus(missing, 404, 'bind to a missing Secret');
  });

  // the spec's type, and Kubernetes' that manifests written for Kubernetes use to get a long-lived token
  for (const prefix of ['orch.io', 'kubernetes.io']) {
    it(`fills legacy token Secrets of type ${prefix}/service-account-token, which authenticate until deleted`, async () => {
      const account = `legacy-${prefix.split('.')[0]}`;
      await createSA(server, 'default', account);
      const created = await request(server, '/api/v1/namespaces/default/secrets', {
        method: 'POST',
        body: { apiVersion: 'v1', kind: 'Secret', type: `${prefix}/service-account-token`, metadata: { name: `${account}-token`, annotations: { [`${prefix}/service-account.name`]: account } } },
      });
      expectStatus(created, 201, 'token secret');
      let secret: any;
      for (let i = 0; i < 200 && !secret?.data?.token; i++) {
        secret = (await request(server, `/api/v1/namespaces/default/secrets/${account}-token`)).json;
        await sleep(25);
      }
      assert.ok(secret.data.token, 'the controller filled the token');
      assert.equal(Buffer.from(secret.data.namespace, 'base64').toString(), 'default');
      assert.equal(Buffer.from(secret.data['ca.crt'], 'base64').toString(), server.admin.ca);
      assert.ok(secret.metadata.annotations[`${prefix}/service-account.uid`], 'the account\'s UID in the type\'s own annotation');
      const token = Buffer.from(secret.data.token, 'base64').toString();
      secrets.push(token);
      assert.equal((await whoami(token)).username, `system:serviceaccount:default:${account}`);
      expectStatus(await request(server, `/api/v1/namespaces/default/secrets/${account}-token`, { method: 'DELETE' }), 200, 'delete');
      expectStatus(await asToken('/version', token), 401, 'after deletion');
      // a token Secret must name its account
      const unnamed = await request(server, '/api/v1/namespaces/default/secrets', {
        method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', type: `${prefix}/service-account-token`, metadata: { name: `${account}-unnamed` } },
      });
      expectStatus(unnamed, 422, 'no account named');
      assert.equal(unnamed.json.details.causes[0].field, `metadata.annotations[${prefix}/service-account.name]`);
    });
  }

  it('authenticates bootstrap tokens from orch-system Secrets', async () => {
    const expiration = new Date(Date.now() + 3_600_000).toISOString();
    const res = await request(server, '/api/v1/namespaces/orch-system/secrets', {
      method: 'POST',
      body: {
        apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.orch.io/token', metadata: { name: 'bootstrap-token-abc123' },
        stringData: { 'token-id': 'abc123', 'token-secret': '0123456789abcdef', expiration, 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:nodes' },
      },
    });
    expectStatus(res, 201, 'bootstrap secret');
    secrets.push('abc123.0123456789abcdef');
    assert.deepEqual(await whoami('abc123.0123456789abcdef'), { username: 'system:bootstrap:abc123', groups: ['system:bootstrappers', 'system:bootstrappers:nodes', 'system:authenticated'] });
    expectStatus(await asToken('/version', 'abc123.0123456789abcdeX'), 401, 'wrong secret');
  });

  it('reviews tokens through TokenReview for the audiences asked, under both group names', async () => {
    await createSA(server, 'default', 'reviewed');
    const vault = (await tokenFor('default', 'reviewed', { audiences: ['vault'] })).json.status.token;
    secrets.push(vault);
    for (const group of ['authentication.orch.io', 'authentication.k8s.io']) {
      const review = (token: string, audiences?: string[]) => request(server, `/apis/${group}/v1/tokenreviews`, {
        method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } },
      });
      const ok = await review(vault, ['vault', 'other']);
      expectStatus(ok, 201, 'review');
      assert.equal(ok.json.apiVersion, `${group}/v1`);
      assert.equal(ok.json.status.authenticated, true);
      assert.deepEqual(ok.json.status.audiences, ['vault']);
      assert.equal(ok.json.status.user.username, 'system:serviceaccount:default:reviewed');
      const wrongAudience = await review(vault);
      assert.deepEqual(wrongAudience.json.status, { user: {}, error: `token audiences ["vault"] is invalid for the target audiences ["${server.url}"]` });
      const garbage = await review('garbage');
      assert.deepEqual(garbage.json.status, { user: {}, error: 'invalid bearer token' });
      const staticReview = await review('static-token-0123456789');
      assert.deepEqual(staticReview.json.status.audiences, [server.url]);
      const empty = await review('');
      expectStatus(empty, 400, 'no token');
      assert.equal(empty.json.message, 'token is required for TokenReview in authentication');
    }
    expectStatus(await request(server, '/apis/authentication.orch.io/v1/tokenreviews'), 405, 'GET');
    expectStatus(await request(server, '/apis/authentication.orch.io/v1/tokenreviews/x', { method: 'POST', body: {} }), 404, 'named');
  });

  it('publishes the issuer\'s discovery and keys, which verify its tokens for a relying party', async () => {
    const config = await request(server, '/.well-known/openid-configuration');
    expectStatus(config, 200, 'discovery');
    assert.equal(config.headers['cache-control'], 'public, max-age=3600');
    assert.deepEqual(config.json, {
      issuer: server.url, jwks_uri: `${server.url}/openid/v1/jwks`, response_types_supported: ['id_token'],
      subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'],
    });
    const keys = await request(server, '/openid/v1/jwks');
    assert.equal(keys.headers['content-type'], 'application/jwk-set+json');
    const token = (await tokenFor('default', 'robot')).json.status.token;
    secrets.push(token);
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys.json), { issuer: server.url, audience: server.url });
    assert.equal(payload.sub, 'system:serviceaccount:default:robot');
  });

  it('answers 401 to every bad token, and never logs one', async () => {
    const keyPem = readFileSync(join(server.dataDir, 'pki', 'sa.key'), 'utf8');
    const key = createPrivateKey(keyPem);
    const publicPem = createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string;
    const kid = JSON.parse(Buffer.from((await tokenFor('default', 'robot')).json.status.token.split('.')[0], 'base64url').toString()).kid;
    const sa = (await request(server, '/api/v1/namespaces/default/serviceaccounts/robot')).json;
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: server.url, sub: 'system:serviceaccount:default:robot', aud: [server.url], iat: now, nbf: now, exp: now + 600, 'orch.io': { namespace: 'default', serviceaccount: { name: 'robot', uid: sa.metadata.uid } } };
    const sign = (c: object, header: object = { alg: 'RS256', kid }) => new SignJWT(c as never).setProtectedHeader(header as never).sign(key);
    const good = await sign(claims);
    expectStatus(await asToken('/version', good), 200, 'a forged-but-valid token signed with the real key works, so the others fail for their own reason');
    const hs = `${b64url({ alg: 'HS256', kid })}.${b64url(claims)}`;
    const [h, p, s] = good.split('.');
    const bad: Record<string, string> = {
      malformed: 'not.a.jwt',
      garbage: '%%%%',
      // 12 KB: past any real token, within Node's 16 KiB header limit (beyond it Node answers 431 before authentication)
      oversized: `${h}.${Buffer.alloc(9_000, 'a').toString('base64url')}.${s}`,
      expired: await sign({ ...claims, iat: now - 7200, nbf: now - 7200, exp: now - 3600 }),
      'not yet valid': await sign({ ...claims, nbf: now + 3600, exp: now + 7200 }),
      'wrong audience': await sign({ ...claims, aud: ['somebody-else'] }),
      'wrong issuer': await sign({ ...claims, iss: 'https://evil.example' }),
      'alg none': `${b64url({ alg: 'none', kid })}.${b64url(claims)}.`,
      'unknown kid': await new SignJWT(claims as never).setProtectedHeader({ alg: 'RS256', kid: 'no-such-key' })
        .sign(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey),
      'key confusion': `${hs}.${createHmac('sha256', publicPem).update(hs).digest('base64url')}`,
      tampered: `${h}.${b64url({ ...claims, sub: 'system:serviceaccount:default:admin' })}.${s}`,
      'tampered signature': `${h}.${p}.${s.slice(0, -6)}AAAAAA`,
    };
    for (const [why, token] of Object.entries(bad)) {
      secrets.push(token);
      const res = await asToken('/api/v1/namespaces', token);
      assert.equal(res.status, 401, `${why}: ${res.body}`);
      assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }, why);
    }
    await sleep(200); // the log is written asynchronously
    assert.ok(server.logs.some((l) => l.includes('Unable to authenticate the request') && l.includes('service account token has expired')), 'failures are logged by reason');
    for (const token of [...secrets, good]) {
      const signature = token.split('.')[2];
      for (const line of server.logs) {
        assert.ok(!line.includes(token), `a token reached the log: ${line.slice(0, 200)}`);
        if (signature && signature.length > 16) assert.ok(!line.includes(signature), `a signature reached the log: ${line.slice(0, 200)}`);
      }
    }
  });

  it('takes a token in a WebSocket subprotocol, as browsers must send it', async () => {
    const token = (await tokenFor('default', 'robot')).json.status.token;
    secrets.push(token);
    const protocol = `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;
    const opened = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`wss://127.0.0.1:${server.port}/api/v1/namespaces/default/serviceaccounts?watch=true`, [protocol, 'v4.channel.k8s.io'], { ca: server.admin.ca });
      ws.on('upgrade', (res) => { resolve(res.statusCode ?? 0); ws.close(); });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', reject);
    });
    assert.equal(opened, 101);
  });

  describe('real clients', () => {
    it('kubectl auth whoami with token, client-certificate and exec kubeconfigs', async () => {
      await createSA(server, 'default', 'kubectl-sa');
      const created = await kubectl(server.kubeconfig, work, ['create', 'token', 'kubectl-sa', '--duration=20m']);
      assert.equal(created.code, 0, created.stderr);
      const token = created.stdout.trim();
      secrets.push(token);
      const byToken = await kubectl(tokenKubeconfig(server, join(work, 'token.kubeconfig'), token), work, ['auth', 'whoami', '-o', 'json']);
      assert.equal(byToken.code, 0, byToken.stderr);
      assert.equal(JSON.parse(byToken.stdout).status.userInfo.username, 'system:serviceaccount:default:kubectl-sa');
      assert.equal(JSON.parse(byToken.stdout).apiVersion, 'authentication.k8s.io/v1');

      const jane = userFor(server, 'jane', ['dev', 'qa']);
      const byCert = await kubectl(certKubeconfig(server, join(work, 'cert.kubeconfig'), jane), work, ['auth', 'whoami']);
      assert.equal(byCert.code, 0, byCert.stderr);
      assert.match(byCert.stdout, /Username\s+jane/);
      assert.match(byCert.stdout, /Groups\s+\[dev qa system:authenticated\]/);

      const viaTokenRequest = execKubeconfig(server, join(work, 'exec.kubeconfig'), process.execPath,
        [mainScript, 'credential', '--kubeconfig', server.kubeconfig, '--service-account', 'default/kubectl-sa', '--expiration', '15m']);
      const byExec = await kubectl(viaTokenRequest, work, ['auth', 'whoami', '-o', 'json']);
      assert.equal(byExec.code, 0, byExec.stderr);
      assert.equal(JSON.parse(byExec.stdout).status.userInfo.username, 'system:serviceaccount:default:kubectl-sa');
      const listed = await kubectl(viaTokenRequest, work, ['get', 'sa', '-n', 'default', '-o', 'name']);
      assert.match(listed.stdout, /serviceaccount\/kubectl-sa/);

      writeFileSync(join(work, 'static.token'), 'static-token-0123456789\n');
      const viaFile = execKubeconfig(server, join(work, 'exec-file.kubeconfig'), process.execPath, [mainScript, 'credential', '--token-file', join(work, 'static.token')]);
      const byFile = await kubectl(viaFile, work, ['auth', 'whoami']);
      assert.equal(byFile.code, 0, byFile.stderr);
      assert.match(byFile.stdout, /Username\s+alice/);

      const written = join(work, 'written.kubeconfig');
      const write = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [mainScript, 'credential', '--kubeconfig', server.kubeconfig, '--service-account', 'default/kubectl-sa', '--write-kubeconfig', written], { stdio: 'ignore' });
        child.on('close', resolve);
      });
      assert.equal(write, 0);
      const byWritten = await kubectl(written, work, ['auth', 'whoami', '-o', 'json']);
      assert.equal(byWritten.code, 0, byWritten.stderr);
      assert.equal(JSON.parse(byWritten.stdout).status.userInfo.username, 'system:serviceaccount:default:kubectl-sa');
    });

    it('@kubernetes/client-node with a bearer token', async () => {
      const token = (await tokenFor('default', 'robot')).json.status.token;
      secrets.push(token);
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'orch', server: server.url, caData: b64(server.admin.ca) }],
        users: [{ name: 'robot', token }],
        contexts: [{ name: 'orch', cluster: 'orch', user: 'robot' }],
        currentContext: 'orch',
      });
      const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
      assert.equal(review.status?.userInfo?.username, 'system:serviceaccount:default:robot');
      const tokenReview = await kc.makeApiClient(AuthenticationV1Api).createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
      assert.equal(tokenReview.status?.authenticated, true);
      const sas = await kc.makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace: 'default' });
      assert.ok(sas.items.some((s) => s.metadata?.name === 'robot'));
      kc.users[0] = { ...kc.users[0], token: 'wrong' };
      await assert.rejects(kc.makeApiClient(CoreV1Api).listNamespace(), (err: any) => err.code === 401);
    });
  });
});

describe('anonymous requests beside tokens (--authorization-mode AlwaysDeny)', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--authorization-mode', 'AlwaysDeny'] }); });
  after(async () => { await server?.dispose(); });

  it('treats a request without credentials as system:anonymous (403), but a bad token as 401', async () => {
    const anonymous = await request(server, '/api/v1/namespaces', { credentials: null });
    assert.equal(anonymous.status, 403);
    assert.match(anonymous.json.message, /User "system:anonymous" cannot list resource "namespaces"/);
    const bad = await request(server, '/api/v1/namespaces', { credentials: null, headers: { authorization: 'Bearer nope' } });
    assert.equal(bad.status, 401);
    const empty = await request(server, '/api/v1/namespaces', { credentials: null, headers: { authorization: 'Bearer  ' } });
    assert.equal(empty.status, 403, 'an empty bearer token is no credential at all');
  });
});
