/** Small API steps the end-to-end suites share, each failing with the response it got. */
import assert from 'node:assert/strict';
import { request, type HttpResponse, type TestServer } from './server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Obj = any;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function expectStatus(res: HttpResponse, code: number, what: string): void {
  assert.equal(res.status, code, `${what}: expected HTTP ${code}, got ${res.status}: ${res.body.slice(0, 600)}`);
}

/** Creates a namespace and waits for its `default` ServiceAccount, so later snapshots are stable. */
export async function createNamespace(server: TestServer, name: string): Promise<void> {
  const res = await request(server, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  expectStatus(res, 201, `create namespace ${name}`);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = await request(server, `/api/v1/namespaces/${name}/serviceaccounts/default`);
    if (got.status === 200) return;
    if (Date.now() > deadline) assert.fail(`default ServiceAccount never appeared in ${name}`);
    await sleep(20);
  }
}

export async function createSA(server: TestServer, ns: string, name: string, meta: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] } = {}): Promise<Obj> {
  const res = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts`, {
    method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, ...meta } },
  });
  expectStatus(res, 201, `create serviceaccount ${ns}/${name}`);
  return res.json;
}

/** GET, change, PUT (retrying on conflict). */
export async function update(server: TestServer, path: string, change: (o: Obj) => void): Promise<Obj> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const got = await request(server, path);
    expectStatus(got, 200, `get ${path}`);
    const obj = got.json;
    change(obj);
    const put = await request(server, path, { method: 'PUT', body: obj });
    if (put.status === 409) continue;
    expectStatus(put, 200, `put ${path}`);
    return put.json;
  }
  assert.fail(`update of ${path} kept conflicting`);
}
