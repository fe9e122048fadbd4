/**
 * The structured authentication configuration (--authentication-config) against a real server:
 * two JWT issuers (one found through a discoveryURL), CEL claim mappings and validation rules,
 * the anonymous block limited to paths, the file re-read when it changes (a bad change ignored),
 * and the combinations the server refuses to start with.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { expectStatus, sleep } from '../support/api.js';
import { OidcIssuer } from '../support/oidc-issuer.js';
import { request, startServer, type HttpResponse, type TestServer } from '../support/server.js';

const indent = (text: string, spaces: number) => text.trimEnd().split('\n').map((l) => ' '.repeat(spaces) + l).join('\n');

function configYaml(one: OidcIssuer, two: OidcIssuer, usernamePrefix = 'idp1:'): string {
  return `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${one.url}
    certificateAuthority: |
${indent(one.ca.pem, 6)}
    audiences: [orch, other]
    audienceMatchPolicy: MatchAny
  claimValidationRules:
  - expression: 'claims.hd == "example.com"'
    message: the hd claim must be set to example.com
  claimMappings:
    username:
      expression: '"${usernamePrefix}" + claims.username'
    groups:
      expression: 'claims.roles.split(",")'
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
  userValidationRules:
  - expression: "!user.username.startsWith('${usernamePrefix}system:')"
    message: no system users from this issuer
- issuer:
    url: ${two.url}
    discoveryURL: ${two.url.replace('127.0.0.1', 'localhost')}/.well-known/openid-configuration
    certificateAuthority: |
${indent(two.ca.pem, 6)}
    audiences: [orch]
  claimMappings:
    username:
      claim: email
      prefix: ""
anonymous:
  enabled: true
  conditions:
  - path: /livez
  - path: /readyz
`;
}

describe('--authentication-config', () => {
  let server: TestServer;
  let work: string;
  let one: OidcIssuer;
  let two: OidcIssuer;
  let file: string;

  const whoami = (token: string): Promise<HttpResponse> => request(server, '/apis/authentication.orch.io/v1/selfsubjectreviews', {
    method: 'POST', credentials: null, headers: { authorization: `Bearer ${token}` }, body: { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' },
  });
  const oneClaims = (extra: object = {}) => ({ username: 'jane', roles: 'dev,ops', sub: 's-1', tenant: 't1', hd: 'example.com', aud: 'other', ...extra });

  async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 600; i++) {
      if (await check()) return;
      await sleep(50);
    }
    assert.fail(`${what} did not happen`);
  }

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'orch-authn-config-'));
    one = await new OidcIssuer('idp-one').start();
    await one.addKey('a');
    two = await new OidcIssuer('idp-two').start('/tenant');
    await two.addKey('b', 'ES256');
    file = join(work, 'authentication.yaml');
    writeFileSync(file, configYaml(one, two));
    // AlwaysAllow stays: the file's anonymous block is not reset by it, as in Kubernetes
    server = await startServer({ args: [`--authentication-config=${file}`] });
    await eventually('issuer discovery', async () => (await whoami(await one.sign(oneClaims()))).status === 201);
  });
  after(async () => {
    await server?.dispose();
    await one?.stop();
    await two?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('maps claims by CEL: username, groups, uid by claim, extra', async () => {
    const res = await whoami(await one.sign(oneClaims()));
    expectStatus(res, 201, 'whoami');
    assert.deepEqual(res.json.status.userInfo, {
      username: 'idp1:jane', uid: 's-1', groups: ['dev', 'ops', 'system:authenticated'], extra: { 'example.com/tenant': ['t1'] },
    });
  });

  it('applies claim and user validation rules, and the audience policy', async () => {
    expectStatus(await whoami(await one.sign(oneClaims({ hd: 'evil.example' }))), 401, 'claim rule');
    expectStatus(await whoami(await one.sign(oneClaims({ username: 'system:admin' }))), 401, 'user rule');
    expectStatus(await whoami(await one.sign(oneClaims({ aud: ['nobody', 'orch'] }))), 201, 'MatchAny');
    expectStatus(await whoami(await one.sign(oneClaims({ aud: 'nobody' }))), 401, 'no audience of ours');
    await sleep(100);
    assert.ok(server.logs.some((l) => l.includes("validation expression 'claims.hd == \\\"example.com\\\"' failed: the hd claim must be set to example.com")));
    assert.ok(server.logs.every((l) => !l.includes('evil.example')));
  });

  it('serves a second issuer found through its discoveryURL', async () => {
    const res = await whoami(await two.sign({ email: 'bob@example.com', aud: 'orch' }));
    expectStatus(res, 201, 'second issuer');
    assert.equal(res.json.status.userInfo.username, 'bob@example.com');
    expectStatus(await whoami(await two.sign({ email: 'bob@example.com', aud: 'orch', email_verified: false })), 401, 'unverified email');
  });

  it('lets anonymous requests in on the configured paths only', async () => {
    expectStatus(await request(server, '/livez', { credentials: null }), 200, '/livez');
    expectStatus(await request(server, '/readyz', { credentials: null }), 200, '/readyz');
    expectStatus(await request(server, '/version', { credentials: null }), 401, '/version');
    expectStatus(await request(server, '/api/v1/namespaces', { credentials: null }), 401, 'a resource');
  });

  it('re-reads the file when it changes; a bad change is logged and ignored', async () => {
    const token = await one.sign(oneClaims());
    writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: http://x}\n');
    await eventually('the bad change logged', async () => server.logs.some((l) => l.includes('failed to load authentication config') && l.includes('URL scheme must be https')
      && l.includes('anonymous: Forbidden: changed from initial configuration file')));
    assert.equal((await whoami(token)).json.status.userInfo.username, 'idp1:jane', 'the old configuration still serves');
    writeFileSync(file, configYaml(one, two).replace(/anonymous:[\s\S]*$/, 'anonymous:\n  enabled: false\n'));
    await eventually('the anonymous change refused', async () => server.logs.some((l) => l.includes('invalid authentication configuration: anonymous: Forbidden: changed from initial configuration file')));
    writeFileSync(file, configYaml(one, two, 'idp1-v2:'));
    await eventually('the new mapping', async () => (await whoami(token)).json?.status?.userInfo?.username === 'idp1-v2:jane');
    assert.ok(server.logs.some((l) => l.includes('reloaded authentication config')));
  });
});

describe('combinations the server refuses to start with', () => {
  let work: string;
  before(() => { work = mkdtempSync(join(tmpdir(), 'orch-authn-refuse-')); });
  after(() => rmSync(work, { recursive: true, force: true }));

  async function refusesToStart(args: string[], message: string): Promise<void> {
    await assert.rejects(startServer({ args, timeoutMs: 30_000 }), (err: Error) => {
      assert.match(err.message, /^server exited with 1:/);
      assert.ok(err.message.includes(message), err.message);
      return true;
    });
  }

  it('refuses --oidc-* flags with a file that configures JWT, --anonymous-auth with an anonymous block, and invalid files', async () => {
    const jwtFile = join(work, 'jwt.yaml');
    writeFileSync(jwtFile, 'apiVersion: apiserver.config.orch.io/v1alpha1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://idp.example\n    audiences: [orch]\n  claimMappings:\n    username: {claim: sub, prefix: ""}\n');
    await refusesToStart([`--authentication-config=${jwtFile}`, '--oidc-issuer-url=https://idp.example', '--oidc-client-id=orch'],
      'authentication-config file and oidc-* flags are mutually exclusive');
    const anonymousFile = join(work, 'anonymous.yaml');
    writeFileSync(anonymousFile, 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: true\n');
    await refusesToStart([`--authentication-config=${anonymousFile}`, '--anonymous-auth=false'],
      '--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file');
    const badFile = join(work, 'bad.yaml');
    writeFileSync(badFile, 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://idp.example\n    audiences: [a, b]\n  claimMappings:\n    username: {claim: sub}\n');
    await refusesToStart([`--authentication-config=${badFile}`],
      'invalid authentication configuration: [jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]');
    await refusesToStart(['--oidc-issuer-url=http://idp.example', '--oidc-client-id=orch'], 'jwt[0].issuer.url: Invalid value: "http://idp.example": URL scheme must be https');
  });
});
