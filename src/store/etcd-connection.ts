/**
 * The etcd engine's connection: unary calls (KV, leases) through the `etcd3` client, and watch
 * streams through `@grpc/grpc-js` with etcd's protos, which `etcd3` ships. `etcd3`'s own watcher
 * is not used: the engine needs exact control of where a watch resumes and of what a progress
 * notification means. Also here: TLS from the `--etcd-*` files, and which failures are worth
 * another attempt.
 */
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Etcd3, isRecoverableError, type IOptions, type IWatchRequest, type IWatchResponse, type KVClient, type LeaseClient } from 'etcd3';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { EtcdSettings } from './storage.js';

export type WatchStream = grpc.ClientDuplexStream<IWatchRequest, IWatchResponse>;
type FaultPolicy = ReturnType<NonNullable<NonNullable<IOptions['faultHandling']>['host']>>;

// watch responses batch up to 1,000 revisions: far more than gRPC's default 4 MiB receive limit
const channelOptions: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': -1,
  // finds a dead peer that sent no FIN; etcd refuses pings more often than every 5 s
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
};

/**
 * Runs each call exactly once. etcd3's defaults retry three times without delay and then close a
 * host for 5 s after three failures, which would turn a one-second leader election into five
 * seconds of errors; the engine retries by itself, with backoff, within a time budget.
 */
class PassThrough implements FaultPolicy {
  declare readonly _altReturn: never;
  private readonly signal = new AbortController().signal;
  readonly onSuccess = () => ({ dispose: () => undefined });
  readonly onFailure = () => ({ dispose: () => undefined });
  async execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> {
    return fn({ signal: this.signal });
  }
}

/** etcd's Watch method, from the protos etcd3 ships next to its code (lib/index.js -> proto/rpc.proto). */
function watchMethod(): grpc.MethodDefinition<IWatchRequest, IWatchResponse> {
  const protoFile = join(dirname(createRequire(import.meta.url).resolve('etcd3')), '..', 'proto', 'rpc.proto');
  const definition = loadSync(protoFile, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(definition).etcdserverpb as grpc.GrpcObject;
  return (pkg.Watch as grpc.ServiceClientConstructor).service.Watch;
}

/** The first key after every key that starts with `prefix`: etcd's `range_end` for a prefix. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]); // every byte is 0xff: to the end of the keyspace
}

/** Failures after which another attempt (on another member, a moment later) may succeed. */
function isTransient(err: unknown): boolean {
  // etcd3 marks gRPC's UNAVAILABLE (no connection, no leader, leader changed, request timed out),
  // DEADLINE_EXCEEDED, CANCELLED, RESOURCE_EXHAUSTED and the like as recoverable
  return err instanceof Error && isRecoverableError(err);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Calls `call` until it succeeds, fails for a reason another attempt cannot fix, or `budgetMs`
 * runs out. Each attempt gets its own deadline; `attempt` counts from 0 so a caller can tell a
 * retry (whose first try may have been applied after all) from a first try.
 */
export async function retrying<T>(budgetMs: number, attemptMs: number, call: (options: grpc.CallOptions, attempt: number) => Promise<T>): Promise<T> {
  const end = Date.now() + budgetMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call({ deadline: Math.min(end, Date.now() + attemptMs) }, attempt);
    } catch (err) {
      const backoff = Math.min(25 * 2 ** attempt, 500);
      if (!isTransient(err) || Date.now() + backoff >= end) throw err;
      await sleep(backoff);
    }
  }
}

export class EtcdConnection {
  readonly kv: KVClient;
  readonly leases: LeaseClient;
  /** `host:port` of every member, in the order given */
  readonly endpoints: string[];
  private readonly etcd: Etcd3;
  private readonly credentials: grpc.ChannelCredentials;
  private readonly watchClients = new Map<string, grpc.Client>();
  private readonly watch = watchMethod();

  constructor(settings: EtcdSettings) {
    this.endpoints = settings.servers.map((url) => new URL(url).host);
    // TLS when the URLs say https (as kube-apiserver decides); the files add a CA and a client identity
    const secure = settings.servers.some((url) => url.startsWith('https:'));
    const ca = secure && settings.caFile ? readFileSync(settings.caFile) : undefined;
    const key = secure && settings.keyFile ? readFileSync(settings.keyFile) : undefined;
    const cert = secure && settings.certFile ? readFileSync(settings.certFile) : undefined;
    this.credentials = secure ? grpc.credentials.createSsl(ca ?? null, key ?? null, cert ?? null) : grpc.credentials.createInsecure();
    this.etcd = new Etcd3({
      hosts: settings.servers,
      // etcd3 builds the same SSL credentials from these; without them it uses the system's roots
      credentials: secure && (ca || key) ? { rootCertificate: ca as Buffer, privateKey: key, certChain: cert } : undefined,
      grpcOptions: channelOptions,
      faultHandling: { host: () => new PassThrough(), global: new PassThrough() },
    });
    this.kv = this.etcd.kv;
    this.leases = this.etcd.leaseClient;
  }

  /**
   * Opens a watch stream on one member, taking the members in turn as `attempt` grows. The stream
   * requires a leader: a member cut off from the quorum ends it instead of going silent.
   */
  openWatch(attempt: number): WatchStream {
    const endpoint = this.endpoints[attempt % this.endpoints.length];
    let client = this.watchClients.get(endpoint);
    if (!client) {
      client = new grpc.Client(endpoint, this.credentials, channelOptions);
      this.watchClients.set(endpoint, client);
    }
    const metadata = new grpc.Metadata();
    metadata.set('hasleader', 'true');
    return client.makeBidiStreamRequest(this.watch.path, this.watch.requestSerialize, this.watch.responseDeserialize, metadata);
  }

  close(): void {
    for (const client of this.watchClients.values()) client.close();
    this.watchClients.clear();
    this.etcd.close();
  }
}
