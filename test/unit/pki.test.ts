import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { promisify } from "node:util";
import { load } from "js-yaml";
import { ensurePki, writeKubeconfig, type PkiMaterial } from "../../src/auth/pki.js";

const execFileAsync = promisify(execFile);
const SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const tempDirs: string[] = [];
after(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "orch-pki-test-"));
  tempDirs.push(dir);
  return dir;
}

function assertIssuedBy(certPem: string, caPem: string): void {
  const cert = new X509Certificate(certPem);
  const ca = new X509Certificate(caPem);
  assert.ok(cert.checkIssued(ca), "issuer name / key identifiers chain to the CA");
  assert.ok(cert.verify(ca.publicKey), "signature verifies with the CA public key");
}

function onPath(cmd: string): boolean {
  try {
    execFileSync(cmd, ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** An https server requiring client certs from the PKI's CA; answers with the peer's subject. */
async function startMtlsServer(m: PkiMaterial): Promise<{ server: https.Server; port: number }> {
  const server = https.createServer(
    { key: m.servingKeyPem, cert: m.servingCertPem, ca: m.caCertPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.end(req.url === "/healthz" ? "ok" : JSON.stringify({ cn: peer.subject.CN, o: peer.subject.O }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function httpsGet(port: number, m: PkiMaterial): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      { host: "127.0.0.1", port, path: "/", ca: m.caCertPem, cert: m.adminCertPem, key: m.adminKeyPem, agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve(body));
      },
    );
    req.on("error", reject);
  });
}

test("ensurePki generates a CA, a serving cert and an admin client cert", async (t) => {
  const dir = join(tempDir(), "pki"); // not yet existing: ensurePki creates it
  const started = performance.now();
  const m = await ensurePki(dir, { hostNames: ["orch.example.test"], ipAddresses: ["10.11.12.13", "fd00::1"] });
  t.diagnostic(`first ensurePki (incl. loading @peculiar/x509): ${(performance.now() - started).toFixed(1)} ms`);

  assert.deepEqual(m.files, {
    dir,
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    servingCert: join(dir, "apiserver.crt"),
    servingKey: join(dir, "apiserver.key"),
    adminCert: join(dir, "admin.crt"),
    adminKey: join(dir, "admin.key"),
  });
  assert.equal(readFileSync(m.files.caCert, "utf8"), m.caCertPem);
  assert.equal(readFileSync(m.files.servingCert, "utf8"), m.servingCertPem);
  assert.equal(readFileSync(m.files.servingKey, "utf8"), m.servingKeyPem);
  assert.equal(readFileSync(m.files.adminCert, "utf8"), m.adminCertPem);
  assert.equal(readFileSync(m.files.adminKey, "utf8"), m.adminKeyPem);
  for (const keyFile of [m.files.caKey, m.files.servingKey, m.files.adminKey]) {
    assert.equal(statSync(keyFile).mode & 0o777, 0o600, `${keyFile} mode`);
    assert.match(readFileSync(keyFile, "utf8"), /^-----BEGIN PRIVATE KEY-----\n/, `${keyFile} is PKCS#8`);
  }

  const ca = new X509Certificate(m.caCertPem);
  assert.equal(ca.subject, "CN=orch-ca");
  assert.ok(ca.ca);
  assert.ok(ca.checkIssued(ca) && ca.verify(ca.publicKey), "CA is self-signed");
  assert.equal(ca.publicKey.asymmetricKeyDetails?.namedCurve, "prime256v1");

  const serving = new X509Certificate(m.servingCertPem);
  assertIssuedBy(m.servingCertPem, m.caCertPem);
  assert.equal(serving.subject, "CN=orch-apiserver");
  assert.equal(serving.ca, false);
  assert.deepEqual(serving.keyUsage, [SERVER_AUTH]);
  const sans = (serving.subjectAltName ?? "").split(", ");
  for (const san of ["DNS:localhost", `DNS:${hostname()}`, "DNS:orch.example.test", "IP Address:127.0.0.1", "IP Address:10.11.12.13"]) {
    assert.ok(sans.includes(san), `SAN ${san} in ${serving.subjectAltName}`);
  }
  assert.ok(sans.some((s) => /^IP Address:(::1|0:0:0:0:0:0:0:1)$/.test(s)), `::1 in ${serving.subjectAltName}`);
  assert.ok(sans.some((s) => /^IP Address:(fd00::1|FD00:0:0:0:0:0:0:1)$/i.test(s)), `fd00::1 in ${serving.subjectAltName}`);
  assert.ok(serving.checkHost("localhost") && serving.checkIP("127.0.0.1") && serving.checkIP("::1"));

  const admin = new X509Certificate(m.adminCertPem);
  assertIssuedBy(m.adminCertPem, m.caCertPem);
  assert.deepEqual(admin.subject.split("\n").sort(), ["CN=orch-admin", "O=system:masters"]);
  assert.equal(admin.ca, false);
  assert.deepEqual(admin.keyUsage, [CLIENT_AUTH]);

  // Backdated an hour for clock skew; CA 10 years, leaves 1 year.
  const now = Date.now();
  for (const cert of [ca, serving, admin]) {
    const notBefore = Date.parse(cert.validFrom);
    assert.ok(notBefore <= now - HOUR_MS + 60_000 && notBefore >= now - HOUR_MS - 60_000, `notBefore ${cert.validFrom}`);
  }
  assert.ok(Math.abs(Date.parse(ca.validTo) - Date.parse(ca.validFrom) - 3650 * DAY_MS) <= 3 * DAY_MS, "CA ~10 years");
  for (const leaf of [serving, admin]) {
    assert.ok(Math.abs(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom) - 365 * DAY_MS) <= DAY_MS, "leaf ~1 year");
  }

  // Random, positive (top bit clear), distinct serial numbers.
  const serials = [ca, serving, admin].map((c) => c.serialNumber);
  assert.equal(new Set(serials).size, 3);
  for (const serial of serials) assert.ok(parseInt(serial.padStart(32, "0").slice(0, 2), 16) < 0x80, `serial ${serial} positive`);
});

test("openssl accepts the chain and the key purposes", async () => {
  const m = await ensurePki(tempDir());
  const verify = (purpose: string, cert: string): string =>
    execFileSync("openssl", ["verify", "-purpose", purpose, "-CAfile", m.files.caCert, cert], { encoding: "utf8" });
  assert.match(verify("sslserver", m.files.servingCert), /: OK/);
  assert.match(verify("sslclient", m.files.adminCert), /: OK/);
});

test("mutual TLS handshake between the serving cert and the admin client cert", async () => {
  const m = await ensurePki(tempDir());
  const { server, port } = await startMtlsServer(m);
  try {
    assert.deepEqual(JSON.parse(await httpsGet(port, m)), { cn: "orch-admin", o: "system:masters" });
  } finally {
    server.close();
  }
});

test("a second ensurePki reuses the existing files byte for byte", async () => {
  const dir = tempDir();
  const first = await ensurePki(dir);
  const second = await ensurePki(dir);
  assert.deepEqual(second, first);
});

test("a missing serving pair is re-issued by the existing CA; the rest is kept", async () => {
  const dir = tempDir();
  const first = await ensurePki(dir);
  rmSync(first.files.servingCert);
  rmSync(first.files.servingKey);
  const second = await ensurePki(dir);
  assert.equal(second.caCertPem, first.caCertPem);
  assert.equal(second.adminCertPem, first.adminCertPem);
  assert.equal(second.adminKeyPem, first.adminKeyPem);
  assert.notEqual(second.servingCertPem, first.servingCertPem);
  assert.notEqual(second.servingKeyPem, first.servingKeyPem);
  assertIssuedBy(second.servingCertPem, first.caCertPem);
  assert.equal(statSync(second.files.servingKey).mode & 0o777, 0o600);
});

test("a newly generated CA re-issues leaves that could not chain to it", async () => {
  const dir = tempDir();
  const first = await ensurePki(dir);
  rmSync(first.files.caCert);
  rmSync(first.files.caKey);
  const second = await ensurePki(dir);
  assert.notEqual(second.caCertPem, first.caCertPem);
  assertIssuedBy(second.servingCertPem, second.caCertPem);
  assertIssuedBy(second.adminCertPem, second.caCertPem);
});

test("an existing RSA CA (e.g. from kubeadm) signs the missing leaves", async () => {
  const dir = tempDir();
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=external-ca", "-days", "30",
    "-keyout", join(dir, "ca.key"), "-out", join(dir, "ca.crt"),
  ], { stdio: "ignore" });
  const m = await ensurePki(dir);
  assert.equal(m.caCertPem, readFileSync(join(dir, "ca.crt"), "utf8"));
  assertIssuedBy(m.servingCertPem, m.caCertPem);
  assertIssuedBy(m.adminCertPem, m.caCertPem);
  execFileSync("openssl", ["verify", "-CAfile", m.files.caCert, m.files.servingCert, m.files.adminCert], { stdio: "ignore" });
});

test("unusable files fail with an error naming the file", async () => {
  const corrupt = tempDir();
  const good = await ensurePki(corrupt);
  writeFileSync(good.files.servingCert, "not a certificate\n");
  await assert.rejects(ensurePki(corrupt), (err: Error) => err.message.includes(good.files.servingCert));

  const badKey = tempDir();
  const m = await ensurePki(badKey);
  writeFileSync(m.files.adminKey, "-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n");
  await assert.rejects(ensurePki(badKey), (err: Error) => err.message.includes(m.files.adminKey));

  const mismatch = tempDir();
  const n = await ensurePki(mismatch);
  writeFileSync(n.files.servingKey, n.adminKeyPem);
  await assert.rejects(ensurePki(mismatch), (err: Error) => err.message.includes(n.files.servingKey) && err.message.includes("does not match"));

  const halfCa = tempDir();
  const h = await ensurePki(halfCa);
  rmSync(h.files.caKey);
  await assert.rejects(ensurePki(halfCa), (err: Error) => err.message.includes(h.files.caKey));
  assert.equal(readFileSync(h.files.caCert, "utf8"), h.caCertPem, "the remaining CA cert is left alone");

  await assert.rejects(ensurePki(tempDir(), { ipAddresses: ["not-an-ip"] }), /not-an-ip/);
});

test("writeKubeconfig embeds the CA and client credentials", async () => {
  const dir = tempDir();
  const m = await ensurePki(dir);
  const file = join(dir, "admin.kubeconfig");
  const url = "https://127.0.0.1:6443";
  writeKubeconfig(file, { server: url, caCertPem: m.caCertPem, clientCertPem: m.adminCertPem, clientKeyPem: m.adminKeyPem });
  assert.equal(statSync(file).mode & 0o777, 0o600);

  const decode = (b64: string): string => Buffer.from(b64, "base64").toString("utf8");
  const cfg = load(readFileSync(file, "utf8")) as Record<string, any>;
  assert.equal(cfg.apiVersion, "v1");
  assert.equal(cfg.kind, "Config");
  assert.equal(cfg["current-context"], "orch");
  assert.equal(cfg.clusters.length, 1);
  assert.equal(cfg.clusters[0].name, "orch");
  assert.equal(cfg.clusters[0].cluster.server, url);
  assert.equal(decode(cfg.clusters[0].cluster["certificate-authority-data"]), m.caCertPem);
  assert.equal(cfg.users.length, 1);
  assert.equal(cfg.users[0].name, "orch-admin");
  assert.equal(decode(cfg.users[0].user["client-certificate-data"]), m.adminCertPem);
  assert.equal(decode(cfg.users[0].user["client-key-data"]), m.adminKeyPem);
  assert.deepEqual(cfg.contexts, [{ name: "orch", context: { cluster: "orch", user: "orch-admin" } }]);

  const custom = join(dir, "custom.kubeconfig");
  writeKubeconfig(custom, {
    server: url, caCertPem: m.caCertPem, clientCertPem: m.adminCertPem, clientKeyPem: m.adminKeyPem,
    clusterName: "c1", userName: "u1", contextName: "ctx1",
  });
  const customCfg = load(readFileSync(custom, "utf8")) as Record<string, any>;
  assert.equal(customCfg["current-context"], "ctx1");
  assert.deepEqual(customCfg.contexts, [{ name: "ctx1", context: { cluster: "c1", user: "u1" } }]);
  assert.equal(customCfg.clusters[0].name, "c1");
  assert.equal(customCfg.users[0].name, "u1");
});

// Under CI kubectl is part of the machine image: there its absence fails this test instead of skipping it.
const kubectlSkip = onPath("kubectl") || process.env.CI ? false : "kubectl is not on PATH";

test("kubectl reads the kubeconfig and makes a request with its credentials", { skip: kubectlSkip }, async () => {
  const dir = tempDir();
  const m = await ensurePki(dir);
  const file = join(dir, "admin.kubeconfig");
  const { server, port } = await startMtlsServer(m);
  try {
    const url = `https://127.0.0.1:${port}`;
    writeKubeconfig(file, { server: url, caCertPem: m.caCertPem, clientCertPem: m.adminCertPem, clientKeyPem: m.adminKeyPem });
    const decode = (b64: string): string => Buffer.from(b64, "base64").toString("utf8");
    const { stdout } = await execFileAsync("kubectl", ["--kubeconfig", file, "config", "view", "--raw", "-o", "json"]);
    const viewed = JSON.parse(stdout);
    assert.equal(viewed["current-context"], "orch");
    assert.equal(viewed.clusters[0].cluster.server, url);
    assert.equal(decode(viewed.clusters[0].cluster["certificate-authority-data"]), m.caCertPem);
    assert.equal(decode(viewed.users[0].user["client-key-data"]), m.adminKeyPem);
    // Go's TLS stack is stricter than Node's; an actual request proves the credentials are usable.
    const health = await execFileAsync("kubectl", ["--kubeconfig", file, "get", "--raw", "/healthz"], { timeout: 20_000 });
    assert.equal(health.stdout.trim(), "ok");
  } finally {
    server.close();
  }
});
