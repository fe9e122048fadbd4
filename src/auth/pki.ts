// Self-managed PKI for the API server: a CA, a TLS serving certificate and an admin client
// certificate, created on first start under <data-dir>/pki and reused afterwards.
import { createPrivateKey, randomBytes, webcrypto, KeyObject, X509Certificate as NodeX509Certificate } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import type * as X509 from "@peculiar/x509";
import { dump } from "js-yaml";

export interface PkiFiles { dir: string; caCert: string; caKey: string; servingCert: string; servingKey: string; adminCert: string; adminKey: string }
export interface PkiMaterial { files: PkiFiles; caCertPem: string; servingCertPem: string; servingKeyPem: string; adminCertPem: string; adminKeyPem: string }

interface PemPair { certPem: string; keyPem: string }
interface SigningCa { cert: X509.X509Certificate; key: webcrypto.CryptoKey }
interface LeafSpec { subject: string; usage: "serverAuth" | "clientAuth"; sans: X509.JsonGeneralNames }

const EC_KEY_ALGORITHM: webcrypto.EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
const HOUR_MS = 3_600_000;
const YEAR_MS = 365 * 24 * HOUR_MS;
const CA_VALIDITY_MS = 10 * YEAR_MS;
const LEAF_VALIDITY_MS = YEAR_MS;

/** Loads the PKI under `dir` (data-dir/pki), generating whatever is missing: a self-signed CA
 *  (CN "orch-ca"), a serving certificate signed by it with SANs = DNS localhost + os.hostname() +
 *  extra hostNames, IP 127.0.0.1 + ::1 + extra ipAddresses (CN "orch-apiserver", extKeyUsage serverAuth),
 *  and an admin client certificate (CN "orch-admin", O "system:masters", extKeyUsage clientAuth). */
export async function ensurePki(dir: string, opts: { hostNames?: string[]; ipAddresses?: string[] } = {}): Promise<PkiMaterial> {
  const files: PkiFiles = {
    dir,
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    servingCert: join(dir, "apiserver.crt"),
    servingKey: join(dir, "apiserver.key"),
    adminCert: join(dir, "admin.crt"),
    adminKey: join(dir, "admin.key"),
  };
  // Checked up front: the ASN.1 encoder's own error would not say which option was wrong.
  for (const ip of opts.ipAddresses ?? []) if (!isIP(ip)) throw new Error(`PKI: ipAddresses: "${ip}" is not an IP address`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });

  let ca: PemPair;
  let caIsNew = false;
  if (existsSync(files.caCert) && existsSync(files.caKey)) {
    ca = loadPair(files.caCert, files.caKey);
  } else if (existsSync(files.caCert) || existsSync(files.caKey)) {
    // Replacing half a CA silently would invalidate every kubeconfig and client cert issued from it.
    const [present, missing] = existsSync(files.caCert) ? [files.caCert, files.caKey] : [files.caKey, files.caCert];
    throw new Error(`PKI: found ${present} but not ${missing}; restore it, or remove ${present} to generate a new CA`);
  } else {
    ca = await generateCa();
    writePair(files.caCert, files.caKey, ca);
    caIsNew = true;
  }

  const servingSpec: LeafSpec = {
    subject: "CN=orch-apiserver",
    usage: "serverAuth",
    sans: [
      ...unique(["localhost", hostname(), ...(opts.hostNames ?? [])]).map((value) => ({ type: "dns" as const, value })),
      ...unique(["127.0.0.1", "::1", ...(opts.ipAddresses ?? [])]).map((value) => ({ type: "ip" as const, value })),
    ],
  };
  const adminSpec: LeafSpec = { subject: "O=system:masters, CN=orch-admin", usage: "clientAuth", sans: [] };

  let signingCa: Promise<SigningCa> | undefined;
  const ensureLeaf = async (certFile: string, keyFile: string, spec: LeafSpec): Promise<PemPair> => {
    // A leaf that predates a freshly generated CA cannot chain to it, so it is re-issued too.
    if (!caIsNew && existsSync(certFile) && existsSync(keyFile)) return loadPair(certFile, keyFile);
    signingCa ??= importCa(ca, files.caKey);
    const leaf = await issueLeaf(await signingCa, spec);
    writePair(certFile, keyFile, leaf);
    return leaf;
  };
  const [serving, admin] = await Promise.all([
    ensureLeaf(files.servingCert, files.servingKey, servingSpec),
    ensureLeaf(files.adminCert, files.adminKey, adminSpec),
  ]);

  return {
    files,
    caCertPem: ca.certPem,
    servingCertPem: serving.certPem,
    servingKeyPem: serving.keyPem,
    adminCertPem: admin.certPem,
    adminKeyPem: admin.keyPem,
  };
}

/** Writes a kubeconfig (YAML, via js-yaml) with one cluster/user/context, embedding the CA and the client cert/key as base64 *-data fields. mode 0600. */
export function writeKubeconfig(
  file: string,
  o: { server: string; caCertPem: string; clientCertPem: string; clientKeyPem: string; clusterName?: string; userName?: string; contextName?: string },
): void {
  const clusterName = o.clusterName ?? "orch";
  const userName = o.userName ?? "orch-admin";
  const contextName = o.contextName ?? "orch";
  const base64 = (pem: string): string => Buffer.from(pem, "utf8").toString("base64");
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: clusterName, cluster: { server: o.server, "certificate-authority-data": base64(o.caCertPem) } }],
    users: [{ name: userName, user: { "client-certificate-data": base64(o.clientCertPem), "client-key-data": base64(o.clientKeyPem) } }],
    contexts: [{ name: contextName, context: { cluster: clusterName, user: userName } }],
    "current-context": contextName,
    preferences: {},
  };
  mkdirSync(dirname(file), { recursive: true });
  // The file holds a cluster-admin private key.
  writeAtomic(file, dump(config, { lineWidth: -1 }), 0o600);
}

let x509Module: Promise<typeof X509> | undefined;

/** @peculiar/x509 is only needed to create certificates, so it is loaded on demand: importing it
 *  costs ~80 ms, which a restart with an existing PKI (loaded via node:crypto) never pays. */
function loadX509(): Promise<typeof X509> {
  x509Module ??= (async () => {
    // x509 loads tsyringe, which throws at import time unless the Reflect metadata API exists.
    await import("reflect-metadata");
    const x509 = await import("@peculiar/x509");
    x509.cryptoProvider.set(webcrypto);
    return x509;
  })();
  return x509Module;
}

async function generateCa(): Promise<PemPair> {
  const x509 = await loadX509();
  const keys = await webcrypto.subtle.generateKey(EC_KEY_ALGORITHM, true, ["sign", "verify"]);
  const notBefore = backdatedNow();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: "CN=orch-ca",
    notBefore,
    notAfter: new Date(notBefore.getTime() + CA_VALIDITY_MS),
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString("pem") + "\n", keyPem: exportKeyPem(keys.privateKey) };
}

async function issueLeaf(ca: SigningCa, spec: LeafSpec): Promise<PemPair> {
  const x509 = await loadX509();
  const keys = await webcrypto.subtle.generateKey(EC_KEY_ALGORITHM, true, ["sign", "verify"]);
  const caSki = ca.cert.getExtension(x509.SubjectKeyIdentifierExtension);
  const notBefore = backdatedNow();
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage[spec.usage]]),
    // Prefer the CA's own SKI so chaining also works for imported CAs whose SKI was computed differently.
    caSki ? new x509.AuthorityKeyIdentifierExtension(caSki.keyId) : await x509.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey),
  ];
  if (spec.sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(spec.sans));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: spec.subject,
    issuer: ca.cert.subjectName,
    notBefore,
    notAfter: new Date(notBefore.getTime() + LEAF_VALIDITY_MS),
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions,
  });
  return { certPem: cert.toString("pem") + "\n", keyPem: exportKeyPem(keys.privateKey) };
}

/** Turns the CA's PEM key into a WebCrypto signing key; accepts RSA and NIST EC keys so an existing (e.g. kubeadm) CA can be dropped in. */
async function importCa(ca: PemPair, keyFile: string): Promise<SigningCa> {
  const x509 = await loadX509();
  const key = createPrivateKey(ca.keyPem);
  const pkcs8 = key.export({ type: "pkcs8", format: "der" });
  let algorithm: webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;
  if (key.asymmetricKeyType === "rsa") {
    algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  } else if (key.asymmetricKeyType === "ec") {
    const curves: Record<string, string> = { prime256v1: "P-256", secp384r1: "P-384", secp521r1: "P-521" };
    const namedCurve = curves[key.asymmetricKeyDetails?.namedCurve ?? ""];
    if (!namedCurve) throw new Error(`PKI: ${keyFile}: unsupported EC curve ${key.asymmetricKeyDetails?.namedCurve}`);
    algorithm = { name: "ECDSA", namedCurve };
  } else {
    throw new Error(`PKI: ${keyFile}: unsupported CA key type ${key.asymmetricKeyType}; use RSA or EC`);
  }
  return {
    cert: new x509.X509Certificate(ca.certPem),
    key: await webcrypto.subtle.importKey("pkcs8", pkcs8, algorithm, false, ["sign"]),
  };
}

/** Reads a cert/key pair, failing with the offending file's name rather than a bare parser error. */
function loadPair(certFile: string, keyFile: string): PemPair {
  const certPem = readFileSync(certFile, "utf8");
  const keyPem = readFileSync(keyFile, "utf8");
  let cert: NodeX509Certificate;
  let key: KeyObject;
  try {
    cert = new NodeX509Certificate(certPem);
  } catch (err) {
    throw new Error(`PKI: cannot parse certificate ${certFile}: ${(err as Error).message}`);
  }
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new Error(`PKI: cannot parse private key ${keyFile}: ${(err as Error).message}`);
  }
  // A mismatched pair would otherwise only surface as an obscure TLS failure at listen time.
  if (!cert.checkPrivateKey(key)) throw new Error(`PKI: private key ${keyFile} does not match certificate ${certFile}`);
  return { certPem, keyPem };
}

function writePair(certFile: string, keyFile: string, pair: PemPair): void {
  writeAtomic(keyFile, pair.keyPem, 0o600);
  writeAtomic(certFile, pair.certPem, 0o644);
}

/** Write-then-rename so a crash never leaves a truncated file that would fail the next start. */
function writeAtomic(file: string, data: string, mode: number): void {
  const tmp = `${file}.tmp-${process.pid}`;
  rmSync(tmp, { force: true }); // a leftover from a crash would keep its old mode
  writeFileSync(tmp, data, { mode });
  renameSync(tmp, file);
}

function exportKeyPem(key: webcrypto.CryptoKey): string {
  return KeyObject.from(key).export({ type: "pkcs8", format: "pem" }).toString();
}

/** 128 random bits with the top bit cleared so the DER INTEGER is positive without padding. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
}

/** Backdated by an hour to tolerate clock skew between this host and its clients. */
function backdatedNow(): Date {
  return new Date(Date.now() - HOUR_MS);
}

function unique(values: string[]): string[] {
  return [...new Set(values.filter((v) => v.length > 0))];
}
