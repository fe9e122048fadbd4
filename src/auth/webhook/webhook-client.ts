/**
 * POSTs a review (TokenReview, SubjectAccessReview) as JSON to the service a webhook kubeconfig
 * names, over HTTPS with its CA and client certificate, and returns the decoded answer. Transient
 * failures (connection errors, timeouts, 429 and 5xx) are retried with Kubernetes'
 * DefaultAuthWebhookRetryBackoff; other failures are not. Messages name the server, never the body.
 */
import { request } from 'node:https';
import { parseJsonAsGo } from '../../api/validation/go-json-syntax.js';
import type { WebhookConnection } from './kubeconfig.js';

const maxResponseBytes = 1 << 20;
/** Kubernetes' DefaultAuthWebhookRetryBackoff: 500ms, ×1.5, 20% jitter, 5 attempts */
const backoff = { initialMs: 500, factor: 1.5, jitter: 0.2, attempts: 5 };

class TransientError extends Error {}
const transientCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export interface WebhookClientOptions {
  connection: WebhookConnection;
  /** each attempt's limit */
  timeoutMs: number;
  /** the `kind` an answer must have when it names one */
  kind: string;
  /** waits between retries; tests shorten it */
  sleep?: (ms: number) => Promise<void>;
}

export class WebhookClient {
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: WebhookClientOptions) {
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** Sends `review`; resolves with the answer's `status` (empty when it has none). */
  async review<S>(review: unknown): Promise<S> {
    const body = JSON.stringify(review);
    let delay = backoff.initialMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.post<S>(body);
      } catch (err) {
        if (!(err instanceof TransientError) || attempt >= backoff.attempts) throw err;
        await this.sleep(delay * (1 + Math.random() * backoff.jitter));
        delay *= backoff.factor;
      }
    }
  }

  private post<S>(body: string): Promise<S> {
    const c = this.options.connection;
    const { timeoutMs, kind } = this.options;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)) };
      if (c.token) headers.authorization = `Bearer ${c.token}`;
      const req = request(c.server, {
        method: 'POST', headers, ca: c.ca, cert: c.cert, key: c.key, servername: c.tlsServerName,
        rejectUnauthorized: !c.insecureSkipTlsVerify, timeout: timeoutMs, agent: false,
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) req.destroy(new Error('response too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code === 429 || code >= 500) { reject(new TransientError(`the server responded with ${code}`)); return; }
          if (code < 200 || code > 299) { reject(new Error(`the server responded with ${code}`)); return; }
          const body = Buffer.concat(chunks);
          try {
            const answer = parseJsonAsGo(body.toString('utf8'), body) as { kind?: string; status?: S };
            if (answer.kind !== undefined && answer.kind !== kind) throw new Error(`expected a ${kind}, got ${answer.kind}`);
            resolve(answer.status ?? ({} as S));
          } catch (err) {
            reject(new Error(`cannot decode the response: ${(err as Error).message}`));
          }
        });
      });
      req.on('timeout', () => req.destroy(new TransientError(`timed out after ${timeoutMs} ms`)));
      // connection failures are worth another attempt (certificate failures are not)
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err instanceof TransientError) reject(err);
        else if (transientCodes.has(err.code ?? '')) reject(new TransientError(`${c.server}: ${err.message}`));
        else reject(new Error(`${c.server}: ${err.message}`));
      });
      req.end(body);
    });
  }
}
