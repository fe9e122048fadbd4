/**
 * Service-account keys: verification keys read from PEM files (RSA and ECDSA public or private
 * keys, and certificates), the signing key and its JOSE algorithm, key IDs as Kubernetes derives
 * them, and the key pair a server without key flags generates in its data dir on first start.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface VerificationKey {
  key: KeyObject;
  /** base64url (unpadded) SHA-256 of the key's PKIX DER, as kube-apiserver computes `kid` */
  kid: string;
  /** the JOSE algorithm tokens signed by this key carry */
  alg: string;
}

export interface SigningKey extends VerificationKey {
  privateKey: KeyObject;
}

const pemBlock = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;
const ecAlgorithms: Readonly<Record<string, string>> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

export function keyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

/** RS256 for RSA keys; ES256/384/512 by the curve of ECDSA keys; undefined for other keys. */
export function algorithmOf(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') return ecAlgorithms[key.asymmetricKeyDetails?.namedCurve ?? ''];
  return undefined;
}

function verificationKey(key: KeyObject, source: string): VerificationKey {
  const alg = algorithmOf(key);
  if (!alg) throw new Error(`${source}: only RSA and ECDSA (P-256, P-384, P-521) keys can verify service account tokens`);
  return { key, kid: keyId(key), alg };
}

/** Every public key a PEM text holds (from public keys, private keys and certificates). */
export function publicKeysFromPem(pem: string, source: string): VerificationKey[] {
  const keys: VerificationKey[] = [];
  for (const match of pem.matchAll(pemBlock)) {
    const block = match[0];
    let key: KeyObject;
    try {
      key = match[1] === 'CERTIFICATE' ? new X509Certificate(block).publicKey : createPublicKey(block);
    } catch (err) {
      throw new Error(`${source}: ${(err as Error).message}`);
    }
    keys.push(verificationKey(key, source));
  }
  if (keys.length === 0) throw new Error(`${source}: data does not contain any valid RSA or ECDSA public keys`);
  return keys;
}

export function publicKeysFromFile(file: string): VerificationKey[] {
  return publicKeysFromPem(readFileSync(file, 'utf8'), file);
}

export function signingKeyFromFile(file: string): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`failed to parse service-account issuer private key ${file}: ${(err as Error).message}`);
  }
  return { ...verificationKey(createPublicKey(privateKey), file), privateKey };
}

function writeAtomic(file: string, data: string, mode: number): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  renameSync(tmp, file);
}

/**
 * The generated key pair in `dir` (`sa.key`, `sa.pub`, as kubeadm names them), made on first
 * start: RSA 2048, so that tokens are RS256 like Kubernetes' and verify fast.
 */
export function ensureServiceAccountKeyPair(dir: string): { keyFile: string; publicKeyFile: string } {
  const keyFile = join(dir, 'sa.key');
  const publicKeyFile = join(dir, 'sa.pub');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fresh = !existsSync(keyFile);
  if (fresh) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeAtomic(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600);
  }
  // a public key left from an earlier key pair would not match the new private key
  if (fresh || !existsSync(publicKeyFile)) {
    const publicKey = createPublicKey(createPrivateKey(readFileSync(keyFile, 'utf8')));
    writeAtomic(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }).toString(), 0o644);
  }
  return { keyFile, publicKeyFile };
}
