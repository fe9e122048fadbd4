/**
 * GETs over HTTPS for identity providers: the provider's CA (or the host's roots), a timeout and
 * a size limit, no redirects. Also the fetch jose calls for a remote key set.
 */
import { request } from 'node:https';

const maxBodyBytes = 1 << 20;
const timeoutMs = 10_000;

export interface HttpsResult { status: number; headers: Record<string, string>; body: string }

export function httpsGet(url: string, ca: string | undefined, signal?: AbortSignal): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ca, timeout: timeoutMs, signal, headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBodyBytes) { req.destroy(new Error(`response from ${url} is larger than ${maxBodyBytes} bytes`)); return; }
        chunks.push(chunk);
      });
      res.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers[k] = v;
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** A fetch for jose's createRemoteJWKSet that trusts `ca`. */
export function fetchWithCa(ca: string | undefined): (url: string, options: { signal?: AbortSignal }) => Promise<Response> {
  return async (url, options) => {
    const result = await httpsGet(url, ca, options.signal);
    return new Response(result.body, { status: result.status, headers: result.headers });
  };
}
