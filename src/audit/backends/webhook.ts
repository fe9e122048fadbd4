/**
 * The webhook backend (--audit-webhook-config-file): each batch is one EventList POSTed to the
 * receiver the kubeconfig names, over HTTPS with its CA and the client certificate it gives.
 * Transient failures (connection reset, 500, 504, 429, or any answer with Retry-After) are
 * retried with Kubernetes' backoff: --audit-webhook-initial-backoff, times 1.5 each step, 20%
 * jitter, five attempts in all.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import { eventJsonAs, eventListJson } from '../event-json.js';
import type { AuditMetrics } from '../metrics.js';
import type { AuditSink } from '../sink.js';
import type { AuditEvent } from '../types.js';
import type { WebhookTarget } from './webhook-kubeconfig.js';

export interface WebhookOptions {
  target: WebhookTarget;
  /** the apiVersion the receiver decodes: ours, or Kubernetes' audit.k8s.io/v1 */
  apiVersion: string;
  initialBackoffMs: number;
  timeoutMs?: number;
}

const attempts = 5;
const backoffFactor = 1.5;
const jitter = 0.2;
const defaultTimeoutMs = 30_000;

class WebhookError extends Error {
  constructor(message: string, readonly retry: boolean, readonly retryAfterMs?: number) { super(message); }
}

export class WebhookBackend implements AuditSink {
  readonly name = 'webhook';
  private readonly agent: HttpAgent;
  private readonly inFlight = new Set<Promise<boolean>>();
  private closing = false;
  private readonly wakeups = new Set<() => void>();

  constructor(private readonly options: WebhookOptions, private readonly metrics: AuditMetrics, private readonly log: Logger) {
    const t = options.target;
    this.agent = t.url.protocol === 'https:'
      ? new HttpsAgent({ keepAlive: true, ca: t.ca, cert: t.cert, key: t.key, rejectUnauthorized: !t.insecureSkipTLSVerify })
      : new HttpAgent({ keepAlive: true });
  }

  processEvents(events: readonly AuditEvent[]): Promise<boolean> {
    const v = this.options.apiVersion;
    const body = eventListJson(events.map((e) => eventJsonAs(e, v)), v);
    const sent = this.sendWithRetries(body).then(() => true, (err: Error) => {
      this.metrics.error(this.name, events.length);
      this.log.error({ err: err.message, events: events.length }, 'Error in audit plugin \'webhook\': events lost');
      return false;
    });
    this.inFlight.add(sent);
    void sent.finally(() => this.inFlight.delete(sent));
    return sent;
  }

  private async sendWithRetries(body: string): Promise<void> {
    let delay = this.options.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.post(body);
        return;
      } catch (err) {
        const retryable = err instanceof WebhookError && err.retry;
        if (!retryable || attempt >= attempts || this.closing) throw err;
        const wait = Math.max((err as WebhookError).retryAfterMs ?? 0, delay * (1 + Math.random() * jitter));
        delay *= backoffFactor;
        await this.sleep(wait);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => { clearTimeout(timer); this.wakeups.delete(wake); resolve(); };
      const timer = setTimeout(wake, ms);
      this.wakeups.add(wake);
    });
  }

  private post(body: string): Promise<void> {
    const t = this.options.target;
    const headers: Record<string, string> = {
      'content-type': 'application/json', accept: 'application/json', 'user-agent': 'orch-apiserver',
      'content-length': String(Buffer.byteLength(body)),
    };
    if (t.token) headers.authorization = `Bearer ${t.token}`;
    const send = t.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(t.url, { method: 'POST', headers, agent: this.agent, timeout: this.options.timeoutMs ?? defaultTimeoutMs }, (res: IncomingMessage) => {
        res.resume();
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) { resolve(); return; }
          const retryAfter = Number(res.headers['retry-after']);
          const suggestsDelay = Number.isFinite(retryAfter) && retryAfter > 0 && (code === 429 || code >= 500);
          reject(new WebhookError(`the audit webhook answered ${code}`, code === 500 || code === 504 || code === 429 || suggestsDelay,
            suggestsDelay ? retryAfter * 1000 : undefined));
        });
      });
      req.on('timeout', () => req.destroy(new WebhookError('the audit webhook did not answer in time', false)));
      req.on('error', (err: NodeJS.ErrnoException) => {
        reject(err instanceof WebhookError ? err : new WebhookError(err.message, err.code === 'ECONNRESET'));
      });
      req.end(body);
    });
  }

  async shutdown(): Promise<void> {
    // batches still being sent get one more attempt, not the rest of their backoff
    this.closing = true;
    for (const wake of [...this.wakeups]) wake();
    await Promise.all([...this.inFlight]);
    this.agent.destroy();
  }
}
