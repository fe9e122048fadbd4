/**
 * An OpenID provider for tests, served over HTTPS on loopback: discovery at
 * /.well-known/openid-configuration, its key set at /jwks, keys made with jose. Keys can be
 * rotated and the provider taken down, and it counts key-set fetches.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { servingCert, testCa, type TestCa } from './certs.js';

type Key = Awaited<ReturnType<typeof generateKeyPair>>;

export interface SignOptions {
  kid?: string;
  alg?: string;
  /** sign with a key the provider does not publish */
  key?: Key['privateKey'];
  header?: Record<string, unknown>;
}

export class OidcIssuer {
  readonly ca: TestCa;
  url = '';
  jwksFetches = 0;
  down = false;
  private server: Server | undefined;
  private readonly keys = new Map<string, { pair: Key; alg: string; published: boolean }>();

  constructor(readonly name: string) {
    this.ca = testCa(name);
  }

  async start(path = ''): Promise<this> {
    const { cert, key } = servingCert(`${this.name}-server`, this.ca);
    this.server = createServer({ cert, key }, (req, res) => {
      if (this.down) { req.socket.destroy(); return; }
      const url = req.url ?? '';
      if (url === `${path}/.well-known/openid-configuration`) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ issuer: this.url, jwks_uri: `${this.url}/jwks`, id_token_signing_alg_values_supported: ['RS256', 'ES256'] }));
      } else if (url === `${path}/jwks`) {
        this.jwksFetches++;
        res.setHeader('content-type', 'application/json');
        void this.jwks().then((body) => res.end(JSON.stringify(body)));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** a new key, published in the key set unless `published` is false */
  async addKey(kid: string, alg = 'RS256', published = true): Promise<Key> {
    const pair = await generateKeyPair(alg, { extractable: true });
    this.keys.set(kid, { pair, alg, published });
    return pair;
  }

  publish(kid: string): void {
    const key = this.keys.get(kid);
    if (key) key.published = true;
  }

  private async jwks(): Promise<{ keys: JWK[] }> {
    const keys: JWK[] = [];
    for (const [kid, { pair, alg, published }] of this.keys) {
      if (published) keys.push({ ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' });
    }
    return { keys };
  }

  publicKey(kid: string): Key['publicKey'] {
    return (this.keys.get(kid) as { pair: Key }).pair.publicKey;
  }

  /** a token for `claims` (iss defaults to this issuer; iat/exp to now and an hour) */
  async sign(claims: JWTPayload, o: SignOptions = {}): Promise<string> {
    const kid = o.kid ?? [...this.keys.keys()][0];
    const entry = this.keys.get(kid);
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: this.url, iat: now, exp: now + 3600, ...claims })
      .setProtectedHeader({ alg: o.alg ?? entry?.alg ?? 'RS256', kid, ...o.header })
      .sign(o.key ?? (entry as { pair: Key }).pair.privateKey);
  }
}
