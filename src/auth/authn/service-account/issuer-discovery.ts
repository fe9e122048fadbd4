/**
 * OpenID Connect discovery for the service-account issuer (k8s.io/kubernetes pkg/serviceaccount
 * openidmetadata.go): `/.well-known/openid-configuration` and the key set at `/openid/v1/jwks`, so
 * that relying parties outside the cluster can verify our tokens. Served only when the issuer is an
 * https URL; built once, the keys being fixed for the life of the process.
 */
import type { VerificationKey } from './keys.js';

export const openIdConfigurationPath = '/.well-known/openid-configuration';
export const jwksPath = '/openid/v1/jwks';
const cacheControl = 'public, max-age=3600';

export interface DiscoveryResponse { status: number; headers: Record<string, string>; body: string }

/** The issuer, if it can serve discovery (https, no query or fragment); undefined otherwise. */
export function discoverableIssuer(issuer: string): URL | undefined {
  if (!URL.canParse(issuer)) return undefined;
  const url = new URL(issuer);
  return url.protocol === 'https:' && url.search === '' && url.hash === '' ? url : undefined;
}

export function jwks(keys: readonly VerificationKey[]): { keys: Record<string, unknown>[] } {
  return {
    keys: keys.map(({ key, kid, alg }) => {
      const { kty, crv, n, e, x, y } = key.export({ format: 'jwk' });
      return kty === 'RSA' ? { use: 'sig', kty, kid, alg, n, e } : { use: 'sig', kty, kid, crv, alg, x, y };
    }),
  };
}

export class IssuerDiscovery {
  private readonly configuration: string;
  private readonly keySet: string;

  constructor(issuer: string, jwksUri: string, keys: readonly VerificationKey[]) {
    this.configuration = JSON.stringify({
      issuer,
      jwks_uri: jwksUri,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))].sort(),
    });
    this.keySet = JSON.stringify(jwks(keys));
  }

  handle(path: string): DiscoveryResponse | undefined {
    if (path === openIdConfigurationPath) return this.answer('application/json', this.configuration);
    if (path === jwksPath) return this.answer('application/jwk-set+json', this.keySet);
    return undefined;
  }

  private answer(contentType: string, body: string): DiscoveryResponse {
    return { status: 200, headers: { 'content-type': contentType, 'cache-control': cacheControl, 'content-length': String(Buffer.byteLength(body)) }, body };
  }
}
