/**
 * From verified claims to a user, as Kubernetes' JWT authenticator maps them (k8s.io/apiserver
 * plugin/pkg/authenticator/token/oidc): username, groups, uid and extra by claim (with prefix) or
 * CEL expression, then the claim validation rules, then the user validation rules. Failures name
 * claims and expressions, never a claim's value.
 */
import type { JWTPayload } from 'jose';
import type { UserInfo } from '../../user.js';
import { celInput, toStringList } from '../../cel/values.js';
import type { CompiledJwtAuthenticator, CompiledRule } from '../config/validation.js';

export class ClaimMappingError extends Error {}

function has(claims: JWTPayload, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(claims, name);
}

function stringClaim(claims: JWTPayload, name: string, what: string): string {
  if (!has(claims, name)) throw new ClaimMappingError(`oidc: parse ${what} ${JSON.stringify(name)}: claim not present`);
  const value = claims[name];
  if (typeof value !== 'string') throw new ClaimMappingError(`oidc: parse ${what} ${JSON.stringify(name)}: claim is not a string`);
  return value;
}

function evaluate(rule: { expression: { evaluate(input: unknown): unknown } }, input: unknown, what: string): unknown {
  try {
    return rule.expression.evaluate(input);
  } catch (err) {
    throw new ClaimMappingError(`oidc: error evaluating ${what}: ${(err as Error).message}`);
  }
}

function checkRules(rules: readonly CompiledRule[], input: unknown, what: string): void {
  for (const rule of rules) {
    const result = evaluate(rule, input, what);
    if (typeof result !== 'boolean') throw new ClaimMappingError(`oidc: error evaluating ${what}: validation expression must return a boolean`);
    if (!result) throw new ClaimMappingError(`oidc: error evaluating ${what}: validation expression '${rule.expression.expression}' failed: ${rule.message}`);
  }
}

function username(a: CompiledJwtAuthenticator, claims: JWTPayload, input: () => unknown): string {
  if (a.username) {
    const value = evaluate({ expression: a.username }, input(), 'username claim expression');
    if (typeof value !== 'string') throw new ClaimMappingError('oidc: error evaluating username claim expression: username claim expression must return a string');
    if (value === '') throw new ClaimMappingError('oidc: empty username via CEL expression is not allowed');
    return value;
  }
  const mapping = a.config.claimMappings.username ?? {};
  const claim = mapping.claim ?? '';
  const name = stringClaim(claims, claim, 'username claims');
  // an email is a user name only once verified, when the token says whether it is
  if (claim === 'email' && has(claims, 'email_verified')) {
    if (typeof claims.email_verified !== 'boolean') throw new ClaimMappingError("oidc: parse 'email_verified' claim: not a boolean");
    if (!claims.email_verified) throw new ClaimMappingError('oidc: email not verified');
  }
  return mapping.prefix ? mapping.prefix + name : name;
}

function groups(a: CompiledJwtAuthenticator, claims: JWTPayload, input: () => unknown): string[] {
  const mapping = a.config.claimMappings.groups ?? {};
  const claim = mapping.claim ?? '';
  if (claim !== '' && has(claims, claim)) {
    // a single string is one group (kubernetes/kubernetes#33290)
    const value = claims[claim];
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || !list.every((g) => typeof g === 'string')) {
      throw new ClaimMappingError(`oidc: parse groups claim ${JSON.stringify(claim)}: claim is not a string or a list of strings`);
    }
    return mapping.prefix ? list.map((g) => mapping.prefix + g) : [...list];
  }
  if (!a.groups) return [];
  try {
    return toStringList(evaluate({ expression: a.groups }, input(), 'group claim expression'));
  } catch (err) {
    if (err instanceof ClaimMappingError) throw err;
    throw new ClaimMappingError(`oidc: error evaluating group claim expression: ${(err as Error).message}`);
  }
}

function uid(a: CompiledJwtAuthenticator, claims: JWTPayload, input: () => unknown): string {
  const claim = a.config.claimMappings.uid?.claim ?? '';
  if (claim !== '') return stringClaim(claims, claim, 'uid claim');
  if (!a.uid) return '';
  const value = evaluate({ expression: a.uid }, input(), 'uid claim expression');
  if (typeof value !== 'string') throw new ClaimMappingError('oidc: error evaluating uid claim expression: uid claim expression must return a string');
  return value;
}

function extra(a: CompiledJwtAuthenticator, input: () => unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const mapping of a.extra) {
    let values: string[];
    try {
      values = toStringList(evaluate(mapping, input(), 'extra claim expression'));
    } catch (err) {
      if (err instanceof ClaimMappingError) throw err;
      throw new ClaimMappingError(`oidc: error evaluating extra claim expression: ${mapping.expression.expression}: ${(err as Error).message}`);
    }
    if (values.length > 0) out[mapping.key] = values;
  }
  return out;
}

/** The user a verified token names; ClaimMappingError when a mapping or rule refuses it. */
export function mapClaims(a: CompiledJwtAuthenticator, claims: JWTPayload): UserInfo {
  let converted: unknown;
  const input = () => (converted ??= celInput(claims));
  const user: UserInfo = { name: username(a, claims, input), groups: groups(a, claims, input) };
  const id = uid(a, claims, input);
  if (id !== '') user.uid = id;
  const extras = extra(a, input);
  if (Object.keys(extras).length > 0) user.extra = extras;

  for (const rule of a.config.claimValidationRules ?? []) {
    if (!rule.claim) continue;
    if (!has(claims, rule.claim)) throw new ClaimMappingError(`oidc: required claim ${rule.claim} not present in ID token`);
    if (typeof claims[rule.claim] !== 'string') throw new ClaimMappingError(`oidc: parse claim ${rule.claim}: claim is not a string`);
    // the values are left out: a claim's value never reaches a log line
    if (claims[rule.claim] !== (rule.requiredValue ?? '')) throw new ClaimMappingError(`oidc: required claim ${rule.claim} value does not match`);
  }
  if (a.claimRules.length > 0) checkRules(a.claimRules, input(), 'claim validation expression');
  if (a.userRules.length > 0) {
    const userInput = celInput({ username: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} });
    checkRules(a.userRules, userInput, 'user info validation rule');
  }
  return user;
}
