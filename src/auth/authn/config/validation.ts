/**
 * Validation of an AuthenticationConfiguration, as Kubernetes 1.32 validates it
 * (k8s.io/apiserver pkg/apis/apiserver/validation): every problem names its field; CEL
 * expressions are compiled here, so a configuration that loads evaluates.
 */
import { X509Certificate } from 'node:crypto';
import { aggregateFieldErrors, fieldErrors, type FieldError } from '../../../status/status-error.js';
import { isDns1123Subdomain } from '../../../api/validation/names.js';
import type { AuthenticationConfiguration, JwtAuthenticatorConfig, PrefixedClaimOrExpression } from './authentication-config.js';
import type { CelVariable, CompiledExpression } from '../../cel/expression.js';

export interface CompiledRule { expression: CompiledExpression; message: string }

/** A JWT authenticator with its expressions compiled. */
export interface CompiledJwtAuthenticator {
  config: JwtAuthenticatorConfig;
  username?: CompiledExpression;
  groups?: CompiledExpression;
  uid?: CompiledExpression;
  extra: { key: string; expression: CompiledExpression }[];
  claimRules: CompiledRule[];
  userRules: CompiledRule[];
}

const maxJwtAuthenticators = 64;

type CelModule = typeof import('../../cel/expression.js');

class Compiler {
  readonly errors: FieldError[] = [];

  /** `cel` undefined: the configuration has no expression (the CEL library is loaded only when one has) */
  constructor(private readonly cel: CelModule | undefined) {}

  compile(expression: string, variable: CelVariable, field: string): CompiledExpression | undefined {
    const cel = this.cel as CelModule;
    try {
      return cel.CompiledExpression.compile(expression, variable);
    } catch (err) {
      if (!(err instanceof cel.CelCompileError)) throw err;
      this.errors.push(fieldErrors.invalid(field, expression, err.message));
      return undefined;
    }
  }
}

function validateUrl(url: string, disallowed: readonly string[], field: string, errs: FieldError[]): void {
  if (disallowed.includes(url)) errs.push(fieldErrors.invalid(field, url, `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(' ')}]`));
  if (!URL.canParse(url)) {
    errs.push(fieldErrors.invalid(field, url, `parse ${JSON.stringify(url)}: invalid URL`));
    return;
  }
  const u = new URL(url);
  if (u.protocol !== 'https:') errs.push(fieldErrors.invalid(field, url, 'URL scheme must be https'));
  if (u.username || u.password) errs.push(fieldErrors.invalid(field, url, 'URL must not contain a username or password'));
  if (u.search) errs.push(fieldErrors.invalid(field, url, 'URL must not contain a query'));
  if (u.hash) errs.push(fieldErrors.invalid(field, url, 'URL must not contain a fragment'));
}

function validateIssuer(a: JwtAuthenticatorConfig, disallowed: readonly string[], path: string, errs: FieldError[]): void {
  const issuer = a.issuer;
  const url = issuer.url ?? '';
  if (url === '') errs.push(fieldErrors.required(`${path}.url`));
  else validateUrl(url, disallowed, `${path}.url`, errs);
  const discovery = issuer.discoveryURL ?? '';
  if (discovery !== '') {
    if (url !== '' && url.replace(/\/+$/, '') === discovery.replace(/\/+$/, '')) {
      errs.push(fieldErrors.invalid(`${path}.discoveryURL`, discovery, 'discoveryURL must be different from URL'));
    }
    validateUrl(discovery, [], `${path}.discoveryURL`, errs);
  }
  const audiences = issuer.audiences ?? [];
  if (audiences.length === 0) {
    errs.push(fieldErrors.required(`${path}.audiences`, `at least one ${path}.audiences is required`));
  } else {
    const seen = new Set<string>();
    audiences.forEach((audience, i) => {
      if (audience === '') errs.push(fieldErrors.required(`${path}.audiences[${i}]`));
      if (seen.has(audience)) errs.push(fieldErrors.duplicate(`${path}.audiences[${i}]`, audience));
      seen.add(audience);
    });
    const policy = issuer.audienceMatchPolicy ?? '';
    if (audiences.length > 1 && policy !== 'MatchAny') {
      errs.push(fieldErrors.invalid(`${path}.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be MatchAny for multiple audiences'));
    }
    if (audiences.length === 1 && policy !== '' && policy !== 'MatchAny') {
      errs.push(fieldErrors.invalid(`${path}.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be empty or MatchAny for single audience'));
    }
  }
  if (issuer.certificateAuthority) {
    const blocks = issuer.certificateAuthority.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    try {
      if (blocks.length === 0) throw new Error('data does not contain any valid RSA or ECDSA certificates');
      for (const block of blocks) new X509Certificate(block);
    } catch (err) {
      errs.push(fieldErrors.invalid(`${path}.certificateAuthority`, '<omitted>', (err as Error).message));
    }
  }
  if (issuer.egressSelectorType) {
    errs.push(fieldErrors.invalid(`${path}.egressSelectorType`, issuer.egressSelectorType,
      'egress selector is not supported when StructuredAuthenticationConfigurationEgressSelector feature gate is disabled'));
  }
}

function prefixedMapping(c: Compiler, m: PrefixedClaimOrExpression | undefined, path: string, required: boolean): CompiledExpression | undefined {
  const claim = m?.claim ?? '';
  const expression = m?.expression ?? '';
  if (claim !== '' && expression !== '') { c.errors.push(fieldErrors.invalid(path, '', "claim and expression can't both be set")); return undefined; }
  if (claim === '' && expression === '') {
    if (required) c.errors.push(fieldErrors.required(path, 'claim or expression is required'));
    return undefined;
  }
  if (expression !== '') {
    if (m?.prefix !== undefined) c.errors.push(fieldErrors.invalid(`${path}.prefix`, m.prefix, 'may not be specified when expression is set'));
    return c.compile(expression, 'claims', `${path}.expression`);
  }
  if (m?.prefix === undefined) {
    c.errors.push(fieldErrors.required(`${path}.prefix`, 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'));
  }
  return undefined;
}

/** Kubernetes' IsDomainPrefixedPath: `<DNS subdomain>/<path>`. */
function domainPrefixedPath(field: string, key: string): FieldError[] {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return [fieldErrors.invalid(field, key, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const host = key.slice(0, slash);
  const errs = isDns1123Subdomain(host).map((e) => fieldErrors.invalid(field, host, e));
  const path = key.slice(slash + 1);
  if (!/^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/.test(path)) errs.push(fieldErrors.invalid(field, path, 'Invalid path'));
  return errs;
}

/** Extra keys under these domains name what the server itself sets. */
function reservedDomain(key: string): string | undefined {
  const slash = key.indexOf('/');
  const domain = slash < 0 ? '' : key.slice(0, slash);
  const under = (d: string) => domain === d || domain.endsWith(`.${d}`);
  if (under('kubernetes.io') || under('k8s.io')) return 'k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use';
  if (under('orch.io')) return 'orch.io and its subdomains are reserved for the server\'s use';
  return undefined;
}

function compileJwt(c: Compiler, a: JwtAuthenticatorConfig, path: string): CompiledJwtAuthenticator {
  const compiled: CompiledJwtAuthenticator = { config: a, extra: [], claimRules: [], userRules: [] };
  const seenClaims = new Set<string>();
  const seenExpressions = new Set<string>();
  (a.claimValidationRules ?? []).forEach((rule, i) => {
    const p = `${path}.claimValidationRules[${i}]`;
    const claim = rule.claim ?? '';
    const expression = rule.expression ?? '';
    if (claim !== '' && expression !== '') c.errors.push(fieldErrors.invalid(p, claim, "claim and expression can't both be set"));
    else if (claim === '' && expression === '') c.errors.push(fieldErrors.required(p, 'claim or expression is required'));
    else if (claim !== '') {
      if (rule.message) c.errors.push(fieldErrors.invalid(`${p}.message`, rule.message, 'may not be specified when claim is set'));
      if (seenClaims.has(claim)) c.errors.push(fieldErrors.duplicate(`${p}.claim`, claim));
      seenClaims.add(claim);
    } else {
      if (rule.requiredValue) c.errors.push(fieldErrors.invalid(`${p}.requiredValue`, rule.requiredValue, 'may not be specified when expression is set'));
      if (seenExpressions.has(expression)) { c.errors.push(fieldErrors.duplicate(`${p}.expression`, expression)); return; }
      seenExpressions.add(expression);
      const compiledRule = c.compile(expression, 'claims', `${p}.expression`);
      if (compiledRule) compiled.claimRules.push({ expression: compiledRule, message: rule.message ?? '' });
    }
  });

  const m = a.claimMappings;
  const mp = `${path}.claimMappings`;
  compiled.username = prefixedMapping(c, m.username, `${mp}.username`, true);
  compiled.groups = prefixedMapping(c, m.groups, `${mp}.groups`, false);
  if (m.uid?.claim && m.uid.expression) c.errors.push(fieldErrors.invalid(`${mp}.uid`, '', "claim and expression can't both be set"));
  else if (m.uid?.expression) compiled.uid = c.compile(m.uid.expression, 'claims', `${mp}.uid.expression`);
  const seenKeys = new Set<string>();
  (m.extra ?? []).forEach((mapping, i) => {
    const p = `${mp}.extra[${i}]`;
    const key = mapping.key ?? '';
    if (key === '') c.errors.push(fieldErrors.required(`${p}.key`));
    else c.errors.push(...domainPrefixedPath(`${p}.key`, key));
    if (key !== key.toLowerCase()) c.errors.push(fieldErrors.invalid(`${p}.key`, key, 'must be lowercase'));
    const reserved = reservedDomain(key);
    if (reserved) c.errors.push(fieldErrors.invalid(`${p}.key`, key, reserved));
    if (seenKeys.has(key)) { c.errors.push(fieldErrors.duplicate(`${p}.key`, key)); return; }
    seenKeys.add(key);
    if (!mapping.valueExpression) { c.errors.push(fieldErrors.required(`${p}.valueExpression`)); return; }
    const expression = c.compile(mapping.valueExpression, 'claims', `${p}.valueExpression`);
    if (expression) compiled.extra.push({ key, expression });
  });

  const usesEmail = compiled.username?.selectsClaim('email') ?? false;
  const usesEmailVerified = [compiled.username, ...compiled.extra.map((e) => e.expression), ...compiled.claimRules.map((r) => r.expression)]
    .some((e) => e?.selectsClaim('email_verified'));
  if (usesEmail && !usesEmailVerified) {
    c.errors.push(fieldErrors.invalid(`${mp}.username.expression`, m.username?.expression ?? '',
      'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression'));
  }

  const seenUserRules = new Set<string>();
  (a.userValidationRules ?? []).forEach((rule, i) => {
    const p = `${path}.userValidationRules[${i}]`;
    if (!rule.expression) { c.errors.push(fieldErrors.required(`${p}.expression`)); return; }
    if (seenUserRules.has(rule.expression)) { c.errors.push(fieldErrors.duplicate(`${p}.expression`, rule.expression)); return; }
    seenUserRules.add(rule.expression);
    const expression = c.compile(rule.expression, 'user', `${p}.expression`);
    if (expression) compiled.userRules.push({ expression, message: rule.message ?? '' });
  });
  return compiled;
}

/**
 * The configuration's JWT authenticators, compiled, and every problem found, each naming its
 * field. `disallowedIssuers`: the service-account issuers.
 */
export async function checkAuthenticationConfiguration(
  config: AuthenticationConfiguration,
  disallowedIssuers: readonly string[],
  /** the AnonymousAuthConfigurableEndpoints feature gate */
  anonymousConfigurable = true,
): Promise<{ compiled: CompiledJwtAuthenticator[]; errors: FieldError[] }> {
  if (config.jwt.length > maxJwtAuthenticators) {
    return { compiled: [], errors: [{ type: 'FieldValueTooMany', field: 'jwt', detail: `must have at most ${maxJwtAuthenticators} items` }] };
  }
  const hasExpression = config.jwt.some((a) => (a.claimValidationRules ?? []).some((r) => r.expression)
    || a.claimMappings.username?.expression || a.claimMappings.groups?.expression || a.claimMappings.uid?.expression
    || (a.claimMappings.extra ?? []).length > 0 || (a.userValidationRules ?? []).length > 0);
  const c = new Compiler(hasExpression ? await import('../../cel/expression.js') : undefined);
  const compiled: CompiledJwtAuthenticator[] = [];
  const seenIssuers = new Set<string>();
  const seenDiscovery = new Set<string>();
  config.jwt.forEach((a, i) => {
    const path = `jwt[${i}]`;
    validateIssuer(a, disallowedIssuers, `${path}.issuer`, c.errors);
    compiled.push(compileJwt(c, a, path));
    const url = a.issuer.url ?? '';
    if (seenIssuers.has(url)) c.errors.push(fieldErrors.duplicate(`${path}.issuer.url`, url));
    seenIssuers.add(url);
    const discovery = a.issuer.discoveryURL ?? '';
    if (discovery !== '') {
      if (seenDiscovery.has(discovery)) c.errors.push(fieldErrors.duplicate(`${path}.issuer.discoveryURL`, discovery));
      seenDiscovery.add(discovery);
    }
  });
  if (config.anonymous && !anonymousConfigurable) {
    c.errors.push(fieldErrors.forbidden('anonymous', 'anonymous is not supported when AnonymousAuthConfigurableEndpoints feature gate is disabled'));
  }
  if (config.anonymous && !config.anonymous.enabled && (config.anonymous.conditions ?? []).length > 0) {
    c.errors.push(fieldErrors.invalid('anonymous.conditions', config.anonymous.conditions, 'enabled should be set to true when conditions are defined'));
  }
  return { compiled, errors: c.errors };
}

/** The compiled JWT authenticators; throws `invalid authentication configuration: ...` naming every bad field. */
export async function validateAuthenticationConfiguration(config: AuthenticationConfiguration, disallowedIssuers: readonly string[], anonymousConfigurable = true): Promise<CompiledJwtAuthenticator[]> {
  const { compiled, errors } = await checkAuthenticationConfiguration(config, disallowedIssuers, anonymousConfigurable);
  if (errors.length > 0) throw new Error(`invalid authentication configuration: ${aggregateFieldErrors(errors)}`);
  return compiled;
}
