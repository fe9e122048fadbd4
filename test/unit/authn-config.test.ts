/**
 * The authentication configuration: loading (both group names, both 1.32 versions, strict),
 * validation with every message naming its field, CEL compiled at load, the combinations with
 * flags the server refuses, the legacy --oidc-* flags as a JWT authenticator, and claims mapped
 * to users by claim and by expression.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { parseAuthenticationConfiguration } from '../../src/auth/authn/config/authentication-config.js';
import { CompiledExpression } from '../../src/auth/cel/expression.js';
import { resolveAuthentication } from '../../src/auth/authn/config/options.js';
import { validateAuthenticationConfiguration } from '../../src/auth/authn/config/validation.js';
import { ClaimMappingError, mapClaims } from '../../src/auth/authn/jwt/claim-mapping.js';
import { parseFlags } from '../../src/config/flags.js';
import type { ServerConfig } from '../../src/config/server-config.js';

const work = mkdtempSync(join(tmpdir(), 'orch-authn-config-'));
after(() => rmSync(work, { recursive: true, force: true }));

const header = 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n';
const issuerBlock = (url = 'https://issuer.test') => `  issuer:\n    url: ${url}\n    audiences: [orch]\n`;

async function invalid(yaml: string, message: string, disallowed: string[] = []): Promise<void> {
  await assert.rejects(validateAuthenticationConfiguration(parseAuthenticationConfiguration(yaml), disallowed), { message: `invalid authentication configuration: ${message}` });
}

async function compiled(yaml: string) {
  const [a] = await validateAuthenticationConfiguration(parseAuthenticationConfiguration(yaml), []);
  return a;
}

describe('loading', () => {
  it('accepts both group names in v1alpha1 and v1beta1, JSON or YAML', () => {
    for (const apiVersion of ['apiserver.config.k8s.io/v1alpha1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.orch.io/v1beta1', 'apiserver.config.orch.io/v1alpha1']) {
      const config = parseAuthenticationConfiguration(JSON.stringify({ apiVersion, kind: 'AuthenticationConfiguration', anonymous: { enabled: true } }));
      assert.deepEqual(config, { jwt: [], anonymous: { enabled: true } });
    }
  });

  it('refuses other kinds and versions, empty files, and unknown fields by their path', () => {
    assert.throws(() => parseAuthenticationConfiguration(''), { message: 'empty config data' });
    assert.throws(() => parseAuthenticationConfiguration('apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n'),
      { message: 'no kind "AuthenticationConfiguration" is registered for version "apiserver.config.k8s.io/v1"' });
    assert.throws(() => parseAuthenticationConfiguration('apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\n'), /no kind "AuthorizationConfiguration"/);
    assert.throws(() => parseAuthenticationConfiguration(`${header}jwt:\n- issuer:\n    url: https://x\n    audience: [a]\n`),
      { message: 'strict decoding error: unknown field "jwt[0].issuer.audience"' });
  });

  it('never throws anything but an Error with a message on arbitrary input (property)', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      try { parseAuthenticationConfiguration(`${header}${JSON.stringify({ jwt: value }).slice(1, -1).replace(/^"jwt":/, 'jwt: ')}`); } catch (err) {
        assert.ok(err instanceof Error && err.message.length > 0);
      }
    }), { numRuns: 200 });
  });
});

describe('validation', () => {
  it('names the field of every problem, as Kubernetes words it', async () => {
    await invalid(`${header}jwt:\n- issuer:\n    url: http://x.test\n    audiences: [a]\n  claimMappings:\n    username: {claim: sub, prefix: ""}\n`,
      'jwt[0].issuer.url: Invalid value: "http://x.test": URL scheme must be https');
    await invalid(`${header}jwt:\n- issuer:\n    url: https://x.test\n    audiences: [a, b]\n  claimMappings:\n    username: {claim: sub, prefix: ""}\n`,
      'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences');
    await invalid(`${header}jwt:\n- issuer:\n    url: https://x.test\n  claimMappings:\n    username: {claim: sub, prefix: ""}\n`,
      'jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required');
    await invalid(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {claim: sub}\n`,
      'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing');
    await invalid(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {claim: sub, expression: claims.sub}\n`,
      'jwt[0].claimMappings.username: Invalid value: "": claim and expression can\'t both be set');
    await invalid(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings: {}\n`,
      'jwt[0].claimMappings.username: Required value: claim or expression is required');
    await invalid(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {expression: claims.email}\n`,
      'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression');
    await invalid(`${header}jwt:\n-${issuerBlock('https://orch.test').slice(1)}  claimMappings:\n    username: {claim: sub, prefix: ""}\n`,
      'jwt[0].issuer.url: Invalid value: "https://orch.test": URL must not overlap with disallowed issuers: [https://orch.test]', ['https://orch.test']);
    await invalid(`${header}anonymous:\n  enabled: false\n  conditions: [{path: /healthz}]\n`,
      'anonymous.conditions: Invalid value: [{"path":"/healthz"}]: enabled should be set to true when conditions are defined');
  });

  it('aggregates several problems and finds duplicate issuers and keys', async () => {
    const jwt = `-${issuerBlock().slice(1)}  claimMappings:\n    username: {claim: sub, prefix: ""}\n    extra:\n    - {key: example.com/a, valueExpression: claims.a}\n    - {key: example.com/a, valueExpression: claims.b}\n    - {key: kubernetes.io/x, valueExpression: claims.x}\n    - {key: Example.com/U, valueExpression: claims.u}\n`;
    await invalid(`${header}jwt:\n${jwt}${jwt}`, `[${[
      'jwt[0].claimMappings.extra[1].key: Duplicate value: "example.com/a"',
      'jwt[0].claimMappings.extra[2].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use',
      'jwt[0].claimMappings.extra[3].key: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
      'jwt[0].claimMappings.extra[3].key: Invalid value: "Example.com/U": must be lowercase',
      'jwt[1].claimMappings.extra[1].key: Duplicate value: "example.com/a"',
      'jwt[1].claimMappings.extra[2].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use',
      'jwt[1].claimMappings.extra[3].key: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
      'jwt[1].claimMappings.extra[3].key: Invalid value: "Example.com/U": must be lowercase',
      'jwt[1].issuer.url: Duplicate value: "https://issuer.test"',
    ].join(', ')}]`);
  });

  it('compiles CEL at load: syntax errors and undeclared names are refused there', async () => {
    await assert.rejects(compiled(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {expression: 'claims.'}\n`),
      /jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "claims\.": compilation failed: ERROR: /);
    await assert.rejects(compiled(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {expression: 'user.username'}\n`),
      /undeclared reference to 'user'/);
    await assert.rejects(compiled(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {claim: sub, prefix: ""}\n  userValidationRules:\n  - expression: claims.sub != ""\n`),
      /jwt\[0\]\.userValidationRules\[0\]\.expression: .*undeclared reference to 'claims'/);
    const ok = await compiled(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {expression: 'claims.groups.exists(g, g == "x") ? claims.sub : "nobody"'}\n`);
    assert.ok(ok.username);
  });
});

describe('claims to users', () => {
  it('maps by claim with prefixes; a single-string groups claim is one group; missing groups are none', async () => {
    const a = await compiled(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {claim: sub, prefix: "oidc:"}\n    groups: {claim: roles, prefix: "r:"}\n    uid: {claim: oid}\n`);
    assert.deepEqual(mapClaims(a, { sub: 'jane', roles: ['dev', 'ops'], oid: 'u-1' }), { name: 'oidc:jane', groups: ['r:dev', 'r:ops'], uid: 'u-1' });
    assert.deepEqual(mapClaims(a, { sub: 'jane', roles: 'dev', oid: 'u-1' }).groups, ['r:dev']);
    assert.deepEqual(mapClaims(a, { sub: 'jane', oid: 'u-1' }).groups, []);
    assert.throws(() => mapClaims(a, { oid: 'u' }), { message: 'oidc: parse username claims "sub": claim not present' });
    assert.throws(() => mapClaims(a, { sub: 'jane', roles: [1], oid: 'u' }), ClaimMappingError);
  });

  it('takes an email only once verified, when the token says', async () => {
    const a = await compiled(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {claim: email, prefix: ""}\n`);
    assert.equal(mapClaims(a, { email: 'j@x.test' }).name, 'j@x.test');
    assert.equal(mapClaims(a, { email: 'j@x.test', email_verified: true }).name, 'j@x.test');
    assert.throws(() => mapClaims(a, { email: 'j@x.test', email_verified: false }), { message: 'oidc: email not verified' });
  });

  it('maps by CEL and checks claim and user rules, naming rules and never a claim\'s value', async () => {
    const a = await compiled(`${header}jwt:
-${issuerBlock().slice(1)}  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: 'claims.exp - claims.iat <= 86400'
    message: total token lifetime must not exceed 24 hours
  claimMappings:
    username: {expression: 'claims.username + ":external-user"'}
    groups: {expression: 'claims.roles.split(",")'}
    uid: {expression: 'claims.sub'}
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
    - key: example.com/none
      valueExpression: '""'
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: 'username cannot use reserved system: prefix'
`);
    const claims = { hd: 'example.com', username: 'jane', roles: 'dev,ops', sub: 's-1', tenant: 't1', iat: 1000, exp: 2000 };
    assert.deepEqual(mapClaims(a, claims), { name: 'jane:external-user', groups: ['dev', 'ops'], uid: 's-1', extra: { 'example.com/tenant': ['t1'] } });
    assert.throws(() => mapClaims(a, { ...claims, hd: 'evil.test' }), { message: 'oidc: required claim hd value does not match' });
    const { hd: _hd, ...withoutHd } = claims;
    assert.throws(() => mapClaims(a, withoutHd), { message: 'oidc: required claim hd not present in ID token' });
    assert.throws(() => mapClaims(a, { ...claims, exp: 100_000 }), {
      message: "oidc: error evaluating claim validation expression: validation expression 'claims.exp - claims.iat <= 86400' failed: total token lifetime must not exceed 24 hours",
    });
    assert.throws(() => mapClaims(a, { ...claims, username: 'system:admin' }).name, /validation expression '!user\.username\.startsWith\('system:'\)' failed: username cannot use reserved system: prefix/);
    const { username: _username, ...withoutUsername } = claims;
    assert.throws(() => mapClaims(a, withoutUsername), /oidc: error evaluating username claim expression: /);
  });

  it('refuses an expression of the wrong type', async () => {
    const a = await compiled(`${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {expression: 'claims.n'}\n    groups: {expression: 'claims.n'}\n`);
    assert.throws(() => mapClaims(a, { n: 5 }), { message: 'oidc: error evaluating username claim expression: username claim expression must return a string' });
  });

  it('reads claims as data: no prototype member is ever a claim (property over names)', () => {
    const expression = CompiledExpression.compile('has(claims.x) ? claims.x : "none"', 'claims');
    fc.assert(fc.property(fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'), (name) => {
      const probe = CompiledExpression.compile(`has(claims.${name})`, 'claims');
      assert.equal(probe.evaluate(new Map()), false);
    }));
    assert.equal(expression.evaluate(new Map()), 'none');
  });
});

describe('flags and the configuration file together', () => {
  const config = (args: string[]): ServerConfig => (parseFlags(args, {}) as { config: ServerConfig }).config;
  const file = join(work, 'authn.yaml');

  it('turns --oidc-* flags into a JWT authenticator, with Kubernetes\' username prefixes', async () => {
    const base = ['--oidc-issuer-url=https://idp.test', '--oidc-client-id=orch'];
    let resolved = await resolveAuthentication(config(base), []);
    assert.deepEqual(resolved.jwt[0].config.claimMappings.username, { claim: 'sub', prefix: 'https://idp.test#' });
    assert.deepEqual(resolved.algorithms, ['RS256']);
    resolved = await resolveAuthentication(config([...base, '--oidc-username-claim=email']), []);
    assert.deepEqual(resolved.jwt[0].config.claimMappings.username, { claim: 'email', prefix: '' });
    resolved = await resolveAuthentication(config([...base, '--oidc-username-prefix=-', '--oidc-groups-claim=groups', '--oidc-required-claim=hd=example.com', '--oidc-signing-algs=ES256,RS256']), []);
    assert.deepEqual(resolved.jwt[0].config.claimMappings, { username: { claim: 'sub', prefix: '' }, groups: { claim: 'groups', prefix: '' } });
    assert.deepEqual(resolved.jwt[0].config.claimValidationRules, [{ claim: 'hd', requiredValue: 'example.com' }]);
    assert.deepEqual(resolved.algorithms, ['ES256', 'RS256']);
    await assert.rejects(resolveAuthentication(config(['--oidc-issuer-url=http://idp.test', '--oidc-client-id=orch']), []),
      { message: 'invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://idp.test": URL scheme must be https' });
    await assert.rejects(resolveAuthentication(config(['--oidc-issuer-url=https://idp.test']), []),
      { message: 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set' });
  });

  it('refuses --oidc-* with a file that configures JWT, and --anonymous-auth with a file that configures anonymous', async () => {
    writeFileSync(file, `${header}jwt:\n-${issuerBlock().slice(1)}  claimMappings:\n    username: {claim: sub, prefix: ""}\n`);
    await assert.rejects(resolveAuthentication(config([`--authentication-config=${file}`, '--oidc-client-id=x']), []),
      { message: 'authentication-config file and oidc-* flags are mutually exclusive' });
    const resolved = await resolveAuthentication(config([`--authentication-config=${file}`]), []);
    assert.equal(resolved.algorithms.length, 9, 'any of the nine algorithms with a file');
    writeFileSync(file, `${header}anonymous:\n  enabled: true\n  conditions: [{path: /livez}]\n`);
    assert.deepEqual((await resolveAuthentication(config([`--authentication-config=${file}`, '--oidc-client-id=x', '--oidc-issuer-url=https://a.test']), [])).anonymous,
      { enabled: true, paths: ['/livez'], fromFile: true }, 'oidc flags are fine when the file configures no JWT');
    await assert.rejects(resolveAuthentication(config([`--authentication-config=${file}`, '--anonymous-auth=true']), []),
      { message: 'anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file' });
  });

  it('follows the feature gates: no file without StructuredAuthenticationConfiguration, no anonymous block without AnonymousAuthConfigurableEndpoints', async () => {
    writeFileSync(file, `${header}anonymous:\n  enabled: true\n`);
    await assert.rejects(resolveAuthentication(config([`--authentication-config=${file}`, '--feature-gates=StructuredAuthenticationConfiguration=false']), []),
      { message: 'set --feature-gates=StructuredAuthenticationConfiguration=true to use authentication-config file' });
    await assert.rejects(resolveAuthentication(config([`--authentication-config=${file}`, '--feature-gates=AnonymousAuthConfigurableEndpoints=false']), []),
      { message: 'invalid authentication configuration: anonymous: Forbidden: anonymous is not supported when AnonymousAuthConfigurableEndpoints feature gate is disabled' });
  });
});
