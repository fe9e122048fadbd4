/** Client certificates for tests, minted with the openssl CLI against the server's CA or a foreign one. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Credentials, TestServer } from './server.js';

const certDir = mkdtempSync(join(tmpdir(), 'orch-test-certs-'));
process.on('exit', () => rmSync(certDir, { recursive: true, force: true }));

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

const clientExt = join(certDir, 'client.ext');
writeFileSync(clientExt, 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');

let serial = 1000;
/** a client certificate for /CN=<cn>/O=<org>… signed by the given CA */
export function clientCert(name: string, subject: string, caCrt: string, caKey: string): { cert: string; key: string } {
  const key = join(certDir, `${name}.key`);
  const csr = join(certDir, `${name}.csr`);
  const crt = join(certDir, `${name}.crt`);
  openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subject);
  openssl('x509', '-req', '-in', csr, '-CA', caCrt, '-CAkey', caKey, '-set_serial', String(serial++), '-days', '1', '-out', crt, '-extfile', clientExt);
  return { cert: readFileSync(crt, 'utf8'), key: readFileSync(key, 'utf8') };
}

/** a CA the servers do not trust, and a certificate from it claiming to be a cluster admin */
export function foreignAdmin(): { cert: string; key: string } {
  const caKey = join(certDir, 'other-ca.key');
  const caCrt = join(certDir, 'other-ca.crt');
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', caCrt, '-subj', '/CN=other-ca', '-days', '1');
  return clientCert('mallory', '/CN=mallory/O=system:masters', caCrt, caKey);
}

/** a user of the server's own CA: `/CN=<user>/O=<group>` for each group */
export function userFor(server: TestServer, user: string, groups: readonly string[] = []): Credentials {
  const pki = join(server.dataDir, 'pki');
  const subject = `/CN=${user}${groups.map((g) => `/O=${g}`).join('')}`;
  const pair = clientCert(`${user}-${server.port}-${serial}`, subject, join(pki, 'ca.crt'), join(pki, 'ca.key'));
  return { ca: server.admin.ca, ...pair };
}

export interface TestCa { crt: string; key: string; pem: string }

/** a fresh CA of its own (for a test's identity provider, webhook or authenticating proxy) */
export function testCa(name: string): TestCa {
  const key = join(certDir, `${name}-ca.key`);
  const crt = join(certDir, `${name}-ca.crt`);
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-subj', `/CN=${name}-ca`, '-days', '2',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  return { crt, key, pem: readFileSync(crt, 'utf8') };
}

/** a serving certificate for 127.0.0.1, localhost and `dnsNames`, signed by `ca` */
export function servingCert(name: string, ca: TestCa, dnsNames: readonly string[] = []): { cert: string; key: string } {
  const key = join(certDir, `${name}.key`);
  const csr = join(certDir, `${name}.csr`);
  const crt = join(certDir, `${name}.crt`);
  const ext = join(certDir, `${name}.ext`);
  writeFileSync(ext, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${['IP:127.0.0.1', 'DNS:localhost', ...dnsNames.map((n) => `DNS:${n}`)].join(',')}\n`);
  openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${name}`);
  openssl('x509', '-req', '-in', csr, '-CA', ca.crt, '-CAkey', ca.key, '-set_serial', String(serial++), '-days', '1', '-out', crt, '-extfile', ext);
  return { cert: readFileSync(crt, 'utf8'), key: readFileSync(key, 'utf8') };
}
