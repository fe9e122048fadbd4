// Self-managed PKI for the API server: a CA, a TLS serving certificate and an admin client
// certificate, created on first start under <data-dir>/pki and reused afterwards.
import { createPrivateKey, KeyObject, X509Certificate as NodeX509Certificate } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import type { IssueRequest, IssueResult, LeafSpec, PemPair } from "./certificate-issuer.js";
import { jsYaml } from "../codec/libraries.js";

export interface PkiFiles { dir: string; caCert: string; caKey: string; servingCert: string; servingKey: string; adminCert: string; adminKey: string }
export interface PkiMaterial { files: PkiFiles; caCertPem: string; servingCertPem: string; servingKeyPem: string; adminCertPem: string; adminKeyPem: string }

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

  let ca: PemPair | undefined;
  if (existsSync(files.caCert) && existsSync(files.caKey)) {
    ca = loadPair(files.caCert, files.caKey);
  } else if (existsSync(files.caCert) || existsSync(files.caKey)) {
    // Replacing half a CA silently would invalidate every kubeconfig and client cert issued from it.
    const [present, missing] = existsSync(files.caCert) ? [files.caCert, files.caKey] : [files.caKey, files.caCert];
    throw new Error(`PKI: found ${present} but not ${missing}; restore it, or remove ${present} to generate a new CA`);
  }
  const caIsNew = ca === undefined;

  const servingSpec: LeafSpec = {
    subject: "CN=orch-apiserver",
    usage: "serverAuth",
    sans: [
      ...unique(["localhost", hostname(), ...(opts.hostNames ?? [])]).map((value) => ({ type: "dns" as const, value })),
      ...unique(["127.0.0.1", "::1", ...(opts.ipAddresses ?? [])]).map((value) => ({ type: "ip" as const, value })),
    ],
  };
  const adminSpec: LeafSpec = { subject: "O=system:masters, CN=orch-admin", usage: "clientAuth", sans: [] };
  const leaves = [
    { certFile: files.servingCert, keyFile: files.servingKey, spec: servingSpec },
    { certFile: files.adminCert, keyFile: files.adminKey, spec: adminSpec },
  ];
  // A leaf that predates a freshly generated CA cannot chain to it, so it is re-issued too.
  const missing = leaves.filter((l) => caIsNew || !existsSync(l.certFile) || !existsSync(l.keyFile));
  const pairs = new Map<string, PemPair>();
  if (missing.length > 0) {
    const issued = await issueInWorker({ ...(ca ? { ca } : {}), caKeyFile: files.caKey, leaves: missing.map((l) => l.spec) });
    if (caIsNew) writePair(files.caCert, files.caKey, issued.ca);
    ca = issued.ca;
    missing.forEach((l, i) => {
      writePair(l.certFile, l.keyFile, issued.leaves[i]);
      pairs.set(l.certFile, issued.leaves[i]);
    });
  }
  const [serving, admin] = leaves.map((l) => pairs.get(l.certFile) ?? loadPair(l.certFile, l.keyFile));
  if (!ca) throw new Error("PKI: no CA"); // unreachable: loaded or issued above

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
  writeAtomic(file, jsYaml().dump(config, { lineWidth: -1 }), 0o600);
}

/** Issues certificates in a worker thread of its own, which ends once they are out (certificate-issuer.ts says why). */
function issueInWorker(request: IssueRequest): Promise<IssueResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("../../workers/certificate-issuer.js", import.meta.url), { workerData: request });
    let answer: { issued?: IssueResult; error?: string } | undefined;
    worker.once("message", (m: { issued?: IssueResult; error?: string }) => { answer = m; });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (answer?.issued) resolve(answer.issued);
      else reject(new Error(answer?.error ?? `PKI: the certificate issuer exited with code ${code} and no answer`));
    });
  });
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

function unique(values: string[]): string[] {
  return [...new Set(values.filter((v) => v.length > 0))];
}
