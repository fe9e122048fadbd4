/**
 * Real etcd for the storage suites (Debian's etcd-server): one member or a cluster of several on
 * free loopback ports with temporary data dirs. Members are stopped by PID and can be started
 * again on their data dir, as a member restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, onFreePorts } from './server.js';

/** PEM files for TLS between clients and etcd (peers talk plain HTTP on loopback). */
export interface EtcdTlsFiles { caFile: string; certFile: string; keyFile: string; clientCertFile: string; clientKeyFile: string }

export interface EtcdOptions {
  /** cluster size; 1 by default */
  members?: number;
  tls?: EtcdTlsFiles;
  /** etcd's timed watch progress notifications; etcd's default is 10m */
  progressNotifyInterval?: string;
}

export interface EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  readonly dataDir: string;
  /** what the process printed (zap JSON lines) */
  readonly logs: string[];
  readonly running: boolean;
  readonly pid: number | undefined;
  /** SIGKILL (or `signal`) by PID, and wait for the exit */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** start again on the same data dir; does not wait for health */
  start(): void;
  /** `{"health":"true"}`: the member has a leader and serves */
  healthy(): Promise<boolean>;
  /** the member's view of the cluster: its id and its leader's id */
  status(): Promise<{ memberId: string; leaderId: string }>;
}

export interface EtcdCluster {
  members: EtcdMember[];
  /** every member's client URL, comma-separated: the value of --etcd-servers */
  servers: string;
  /** the running member the others follow */
  leader(timeoutMs?: number): Promise<EtcdMember>;
  /** waits until every running member (or `members`) answers healthy */
  waitHealthy(members?: EtcdMember[], timeoutMs?: number): Promise<void>;
  /** kills every member and removes the data dirs */
  dispose(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// a test process that dies early must not leave etcd processes behind
const children = new Set<ChildProcess>();
process.once('exit', () => { for (const c of children) c.kill('SIGKILL'); });

class Member implements EtcdMember {
  readonly logs: string[] = [];
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly clientUrl: string,
    readonly dataDir: string,
    private readonly args: string[],
    private readonly tls: EtcdTlsFiles | undefined,
  ) {}

  get running(): boolean { return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null; }
  get pid(): number | undefined { return this.running ? this.child?.pid : undefined; }

  start(): void {
    if (this.running) return;
    const child = spawn('etcd', this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    children.add(child);
    this.exited = new Promise((resolve) => child.once('exit', () => { children.delete(child); resolve(); }));
    const collect = (chunk: Buffer) => { for (const line of chunk.toString().split('\n')) if (line) this.logs.push(line); };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
  }

  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    process.kill(pid, signal);
    await this.exited;
  }

  async healthy(): Promise<boolean> {
    if (!this.running) return false;
    try {
      const res = await this.call('GET', '/health');
      return (JSON.parse(res) as { health?: string }).health === 'true';
    } catch {
      return false;
    }
  }

  async status(): Promise<{ memberId: string; leaderId: string }> {
    const s = JSON.parse(await this.call('POST', '/v3/maintenance/status', '{}')) as { header: { member_id: string }; leader: string };
    return { memberId: s.header.member_id, leaderId: s.leader };
  }

  /** etcd's HTTP gateway on the client URL. */
  private call(method: string, path: string, body?: string): Promise<string> {
    const url = `${this.clientUrl}${path}`;
    const tls = this.tls && {
      ca: readFileSync(this.tls.caFile), cert: readFileSync(this.tls.clientCertFile), key: readFileSync(this.tls.clientKeyFile),
    };
    return new Promise((resolve, reject) => {
      const onResponse = (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
        res.on('error', reject);
      };
      const options = { method, timeout: 2000, agent: false as const, ...tls };
      const req = tls ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
      req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}

export function startEtcd(options: EtcdOptions = {}): Promise<EtcdCluster> {
  // a member that lost its port to another test file exits saying so; the cluster starts on others
  return onFreePorts(() => startCluster(options), (err) => /address already in use/.test(String(err)));
}

async function startCluster(options: EtcdOptions): Promise<EtcdCluster> {
  const count = options.members ?? 1;
  const root = mkdtempSync(join(tmpdir(), 'orch-etcd-'));
  const scheme = options.tls ? 'https' : 'http';
  const specs: Array<{ name: string; clientUrl: string; peerUrl: string; dataDir: string }> = [];
  for (let i = 0; i < count; i++) {
    specs.push({
      name: `m${i}`,
      clientUrl: `${scheme}://127.0.0.1:${await freePort()}`,
      peerUrl: `http://127.0.0.1:${await freePort()}`,
      dataDir: join(root, `m${i}`),
    });
  }
  const initialCluster = specs.map((s) => `${s.name}=${s.peerUrl}`).join(',');
  const members = specs.map((s) => {
    const args = [
      '--name', s.name, '--data-dir', s.dataDir,
      '--listen-client-urls', s.clientUrl, '--advertise-client-urls', s.clientUrl,
      '--listen-peer-urls', s.peerUrl, '--initial-advertise-peer-urls', s.peerUrl,
      '--initial-cluster', initialCluster, '--initial-cluster-state', 'new', '--initial-cluster-token', `orch-test-${process.pid}`,
      // elections in about half a second, so that fault tests stay short
      '--heartbeat-interval', '50', '--election-timeout', '500',
      '--logger', 'zap', '--log-outputs', 'stderr', '--log-level', 'warn',
    ];
    if (options.progressNotifyInterval) args.push('--experimental-watch-progress-notify-interval', options.progressNotifyInterval);
    if (options.tls) {
      args.push('--cert-file', options.tls.certFile, '--key-file', options.tls.keyFile,
        '--trusted-ca-file', options.tls.caFile, '--client-cert-auth');
    }
    return new Member(s.name, s.clientUrl, s.dataDir, args, options.tls);
  });
  for (const m of members) m.start();

  const cluster: EtcdCluster = {
    members,
    servers: members.map((m) => m.clientUrl).join(','),
    async waitHealthy(which = members.filter((m) => m.running), timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const states = await Promise.all(which.map((m) => m.healthy()));
        if (states.every(Boolean)) return;
        const dead = which.find((m) => !m.running);
        if (dead) throw new Error(`etcd member ${dead.name} exited:\n${dead.logs.slice(-20).join('\n')}`);
        if (Date.now() > deadline) {
          throw new Error(`etcd did not become healthy in time:\n${which.map((m) => `${m.name}: ${m.logs.slice(-5).join('\n')}`).join('\n')}`);
        }
        await sleep(50);
      }
    },
    async leader(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (const m of members.filter((x) => x.running)) {
          try {
            const s = await m.status();
            if (s.leaderId !== '0' && s.leaderId === s.memberId) return m;
          } catch { /* not answering: try the next */ }
        }
        if (Date.now() > deadline) throw new Error('etcd has no leader');
        await sleep(50);
      }
    },
    async dispose() {
      await Promise.all(members.map((m) => m.stop()));
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await cluster.waitHealthy();
  } catch (err) {
    await cluster.dispose();
    throw err;
  }
  return cluster;
}
