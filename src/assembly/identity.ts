/** The server's PKI (generated on first start) and the TLS material it serves with, flags first. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePki, type PkiMaterial } from '../auth/pki.js';
import type { ServerConfig } from '../config/server-config.js';

export interface Identity {
  pki: PkiMaterial;
  tls: { key: string; cert: string; ca: string };
}

export async function serverIdentity(config: ServerConfig): Promise<Identity> {
  const pki = await ensurePki(join(config.dataDir, 'pki'), { ipAddresses: config.advertiseAddress ? [config.advertiseAddress] : [] });
  return {
    pki,
    tls: {
      key: config.tlsPrivateKeyFile ? readFileSync(config.tlsPrivateKeyFile, 'utf8') : pki.servingKeyPem,
      cert: config.tlsCertFile ? readFileSync(config.tlsCertFile, 'utf8') : pki.servingCertPem,
      ca: config.clientCaFile ? readFileSync(config.clientCaFile, 'utf8') : pki.caCertPem,
    },
  };
}
