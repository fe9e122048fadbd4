/**
 * A CRD's conversion webhook (strategy Webhook): objects are sent in a ConversionReview v1 over
 * HTTPS, trusting the CRD's caBundle, and the converted objects checked as Kubernetes checks them
 * (same count, the desired apiVersion, the same kind; metadata other than labels and annotations
 * kept from the original). The review goes as `apiextensions.k8s.io/v1`, the name the webhook
 * libraries (controller-runtime, client-go's scheme) decode; a response may name either group.
 * The webhook is a URL or a service reference (see webhook-client-config.ts); transport failures
 * are worded as client-go words them.
 */
import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import type { Conversion } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { parseJsonAsGo } from '../api/validation/go-json-syntax.js';
import { errors, StatusError } from '../status/status-error.js';
import type { WebhookClientConfig } from './crd-types.js';
import { webhookTarget, type WebhookTarget } from './webhook-client-config.js';

const timeoutSeconds = 30;
const timeoutMs = timeoutSeconds * 1000;
const reviewApiVersions = new Set(['apiextensions.k8s.io/v1', 'apiextensions.orch.io/v1']);

interface ConversionResponse { uid?: string; convertedObjects?: KObject[]; result?: { status?: string; message?: string } }

const unknownAuthority = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY']);

/** A failed connection as Go's net and crypto/tls packages say it (what follows `Post "<url>": `). */
function transportError(err: NodeJS.ErrnoException & { cert?: { subjectaltname?: string } }, url: URL): string {
  if (err.code === 'ENOTFOUND') return `dial tcp: lookup ${url.hostname}: no such host`;
  if (err.code === 'ECONNREFUSED') return `dial tcp ${url.hostname}:${url.port || 443}: connect: connection refused`;
  if (err.code && unknownAuthority.has(err.code)) return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (err.code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = (err.cert?.subjectaltname ?? '').split(', ').filter((n) => n.startsWith('DNS:')).map((n) => n.slice(4));
    return `tls: failed to verify certificate: x509: certificate is valid for ${names.join(', ')}, not ${url.hostname}`;
  }
  return err.message;
}

function post(url: URL, ca: string | undefined, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, {
      method: 'POST', ca, timeout: timeoutMs, agent: false,
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`context deadline exceeded (timeout ${timeoutMs / 1000}s)`)));
    req.on('error', reject);
    req.end(body);
  });
}

export class ConversionWebhook {
  private readonly target?: WebhookTarget;
  /** why there is no target (a service name no URL can hold: Kubernetes does not validate its form) */
  private readonly unusable?: string;
  private readonly ca?: string;

  constructor(config: WebhookClientConfig | undefined, private readonly what: string) {
    try {
      if (config) this.target = webhookTarget(config, timeoutSeconds);
    } catch (err) {
      this.unusable = (err as Error).message;
    }
    if (config?.caBundle) this.ca = Buffer.from(config.caBundle, 'base64').toString('utf8');
  }

  async convert(objects: readonly KObject[], desiredAPIVersion: string): Promise<KObject[]> {
    const fail = (why: string) => errors.internal(new Error(`conversion webhook for ${this.what} failed: ${why}`));
    // validation keeps a CRD without a url or service from being stored
    if (!this.target) throw fail(this.unusable ?? 'no webhook url or service');
    const { url, display } = this.target;
    const uid = randomUUID();
    const review = { kind: 'ConversionReview', apiVersion: 'apiextensions.k8s.io/v1', request: { uid, desiredAPIVersion, objects } };
    let answer: { status: number; text: string };
    try {
      answer = await post(url, this.ca, JSON.stringify(review));
    } catch (err) {
      throw fail(`Post "${display}": ${transportError(err as NodeJS.ErrnoException, url)}`);
    }
    if (answer.status < 200 || answer.status > 299) throw fail(`Post "${display}": the server responded with status ${answer.status}`);
    let parsed: { apiVersion?: string; kind?: string; response?: ConversionResponse };
    try {
      parsed = parseJsonAsGo(answer.text) as typeof parsed;
    } catch (err) {
      throw fail(`invalid JSON in the ConversionReview response: ${(err as Error).message}`);
    }
    if (parsed.kind !== 'ConversionReview' || !reviewApiVersions.has(parsed.apiVersion ?? '')) throw fail(`expected ConversionReview v1, got ${parsed.apiVersion}, Kind=${parsed.kind}`);
    const response = parsed.response;
    if (!response) throw fail('no response provided');
    if (response.uid !== uid) throw fail(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid)}`);
    if (response.result?.status !== 'Success') throw new StatusError(500, 'InternalError', `conversion webhook for ${this.what} returned failure: ${response.result?.message ?? ''}`);
    const converted = response.convertedObjects ?? [];
    if (converted.length !== objects.length) throw fail(`returned ${converted.length} objects, expected ${objects.length}`);
    return converted.map((out, i) => {
      const original = objects[i];
      if (out.apiVersion !== desiredAPIVersion) throw fail(`invalid converted object at index ${i}: invalid apiVersion ${JSON.stringify(out.apiVersion)}, expected ${JSON.stringify(desiredAPIVersion)}`);
      if (out.kind !== original.kind) throw fail(`invalid converted object at index ${i}: invalid kind ${JSON.stringify(out.kind)}, expected ${JSON.stringify(original.kind)}`);
      // only labels and annotations may change (restoreObjectMeta)
      const metadata = { ...original.metadata };
      const changed = (out.metadata ?? {}) as KObject['metadata'];
      if (changed.labels !== undefined) metadata.labels = changed.labels; else delete metadata.labels;
      if (changed.annotations !== undefined) metadata.annotations = changed.annotations; else delete metadata.annotations;
      return { ...out, metadata };
    });
  }
}

/**
 * The view conversion of a version converted by webhook: batches are converted ahead (`prepare`),
 * and each result remembered per object, so that a stored object version is converted once.
 */
export function webhookConversion(webhook: ConversionWebhook, servedApiVersion: string, storedApiVersion: string, after: (o: KObject) => KObject): Conversion {
  const converted = { fromStorage: new WeakMap<object, KObject>(), toStorage: new WeakMap<object, KObject>() };
  const lookup = (direction: 'fromStorage' | 'toStorage', o: KObject): KObject => {
    const out = converted[direction].get(o);
    if (!out) throw errors.internal(new Error(`${direction === 'fromStorage' ? servedApiVersion : storedApiVersion} conversion was not prepared`));
    return out;
  };
  return {
    fromStorage: (o) => lookup('fromStorage', o),
    toStorage: (o) => lookup('toStorage', o),
    async prepare(objects, direction) {
      const cache = converted[direction];
      const pending = objects.filter((o) => !cache.has(o));
      if (pending.length === 0) return;
      const out = await webhook.convert(pending, direction === 'fromStorage' ? servedApiVersion : storedApiVersion);
      pending.forEach((o, i) => cache.set(o, direction === 'fromStorage' ? after(out[i]) : out[i]));
    },
  };
}
