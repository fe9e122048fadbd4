/**
 * Issues the PKI's certificates with @peculiar/x509: a self-signed CA, and leaves signed by a CA
 * (new or loaded). It runs in a worker thread of its own (workers/certificate-issuer.ts) that ends
 * once the certificates are out: the ASN.1 library and the garbage of issuing stayed in the front
 * thread's heap for the server's life otherwise (a first start idled at 13 MiB more RSS than a
 * restart with the PKI on disk, its old space 4.8 MiB larger).
 */
import { createPrivateKey, randomBytes, webcrypto, KeyObject } from "node:crypto";
import type * as X509 from "@peculiar/x509";

export interface PemPair { certPem: string; keyPem: string }
export interface LeafSpec { subject: string; usage: "serverAuth" | "clientAuth"; sans: X509.JsonGeneralNames }

/** What to issue: a new CA unless `ca` is given (with the file its key came from, for errors), and the leaves it signs. */
export interface IssueRequest { ca?: PemPair; caKeyFile: string; leaves: LeafSpec[] }
/** The CA (as given, or new) and the leaves, in the request's order. */
export interface IssueResult { ca: PemPair; leaves: PemPair[] }

interface SigningCa { cert: X509.X509Certificate; key: webcrypto.CryptoKey }

const EC_KEY_ALGORITHM: webcrypto.EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
const HOUR_MS = 3_600_000;
const YEAR_MS = 365 * 24 * HOUR_MS;
const CA_VALIDITY_MS = 10 * YEAR_MS;
const LEAF_VALIDITY_MS = YEAR_MS;

export async function issueCertificates(request: IssueRequest): Promise<IssueResult> {
  // x509 loads tsyringe, which throws at import time unless the Reflect metadata API exists.
  await import("reflect-metadata");
  const x509 = await import("@peculiar/x509");
  x509.cryptoProvider.set(webcrypto);
  const ca = request.ca ?? await generateCa(x509);
  if (request.leaves.length === 0) return { ca, leaves: [] };
  const signing = await importCa(x509, ca, request.caKeyFile);
  return { ca, leaves: await Promise.all(request.leaves.map((spec) => issueLeaf(x509, signing, spec))) };
}

type X509Library = typeof X509;

async function generateCa(x509: X509Library): Promise<PemPair> {
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

async function issueLeaf(x509: X509Library, ca: SigningCa, spec: LeafSpec): Promise<PemPair> {
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
async function importCa(x509: X509Library, ca: PemPair, keyFile: string): Promise<SigningCa> {
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
