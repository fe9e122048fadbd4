/** Client certificates for identities other than the admin, signed by a test server's CA with the openssl CLI. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Credentials, TestServer } from './server.js';

let serial = 5000;

/** A certificate for /CN=<name>/O=<group>... from the server's CA (kept in its data dir, removed with it). */
export function userCredentials(server: TestServer, name: string, groups: string[] = []): Credentials {
  const dir = join(server.dataDir, 'test-certs');
  mkdirSync(dir, { recursive: true });
  const ext = join(dir, 'client.ext');
  writeFileSync(ext, 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const crt = join(dir, `${name}.crt`);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const subject = `/CN=${name}${groups.map((g) => `/O=${g}`).join('')}`;
  openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subject);
  const pki = join(server.dataDir, 'pki');
  openssl('x509', '-req', '-in', csr, '-CA', join(pki, 'ca.crt'), '-CAkey', join(pki, 'ca.key'), '-set_serial', String(serial++), '-days', '1', '-out', crt, '-extfile', ext);
  return { ca: server.admin.ca, cert: readFileSync(crt, 'utf8'), key: readFileSync(key, 'utf8') };
}
