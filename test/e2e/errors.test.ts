/**
 * Failure answers of the API, each checked against kube-apiserver 1.32: the HTTP status, and the
 * Status body's reason, code, message and details; plus content negotiation (YAML in and out),
 * field validation directives, body limits and the too-large-resourceVersion timeout.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type HttpResponse, type TestServer } from '../support/server.js';

let seq = 0;
function uniq(prefix: string): string {
  seq++;
  return `${prefix}-${seq}-${Math.random().toString(36).slice(2, 7)}`;
}

const saPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/serviceaccounts${name ? `/${name}` : ''}`;
const secretPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;
const evPath = (ns: string, name?: string) => `/apis/events.orch.io/v1/namespaces/${ns}/events${name ? `/${name}` : ''}`;

/** the media types kube-apiserver 1.32 serves for built-in kinds (CBOR is off by default) */
const servedMediaTypes = 'application/json, application/yaml, application/vnd.orch.protobuf';

function expectStatus(res: HttpResponse, code: number, reason: string | undefined, message?: string): void {
  assert.equal(res.status, code, `expected HTTP ${code}, got ${res.status}: ${res.body}`);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.json?.kind, 'Status', res.body);
  assert.equal(res.json.apiVersion, 'v1');
  assert.deepEqual(res.json.metadata, {});
  assert.equal(res.json.status, 'Failure');
  assert.equal(res.json.code, code);
  assert.equal(res.json.reason, reason);
  if (message !== undefined) assert.equal(res.json.message, message);
}

function rawPost(server: TestServer, path: string, body: string, contentType = 'application/json', method = 'POST'): Promise<HttpResponse> {
  return request(server, path, { method, body, headers: { 'content-type': contentType } });
}

describe('error answers', () => {
  let server: TestServer;
  let ns: string;

  before(async () => {
    server = await startServer();
    ns = uniq('errs');
    const res = await request(server, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    assert.equal(res.status, 201, res.body);
  });
  after(async () => { await server?.dispose(); });

  describe('malformed bodies (400 BadRequest)', () => {
    it('refuses malformed JSON', async () => {
      const res = await rawPost(server, saPath(ns), '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"broken"}');
      // Go's encoding/json message, then kube-apiserver's summary of the body: its first 30 bytes
      expectStatus(res, 400, 'BadRequest',
        'the object provided is unrecognized (must be of type ServiceAccount): couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Ser ...)');
      assert.equal((await request(server, saPath(ns, 'broken'))).status, 404);
    });

    it('words JSON syntax errors as Go\'s encoding/json does', async () => {
      const unrecognized = 'the object provided is unrecognized (must be of type ConfigMap): couldn\'t get version/kind; json parse error: ';
      const cmPath = `/api/v1/namespaces/${ns}/configmaps`;
      expectStatus(await rawPost(server, cmPath, '{"apiVersion":"v1","kind":"ConfigMap",x}'), 400, 'BadRequest',
        `${unrecognized}invalid character 'x' looking for beginning of object key string ({"apiVersion":"v1","kind":"Con ...)`);
      expectStatus(await rawPost(server, cmPath, '{"data":{"a":"b\tc"}}'), 400, 'BadRequest',
        `${unrecognized}invalid character '\\t' in string literal ({"data":{"a":"b\tc"}})`);
      // a body not starting with '{' is summarized in hex; Go names the first byte of a non-ASCII character
      expectStatus(await rawPost(server, cmPath, 'é'), 400, 'BadRequest', `${unrecognized}invalid character 'Ã' looking for beginning of value (c3a9)`);
    });

    it('refuses an empty body', async () => {
      const res = await rawPost(server, saPath(ns), '');
      expectStatus(res, 400, 'BadRequest',
        'the object provided is unrecognized (must be of type ServiceAccount): couldn\'t get version/kind; json parse error: unexpected end of JSON input (<empty>)');
    });

    it('refuses wrong types with Go\'s unmarshal message', async () => {
      const res = await rawPost(server, saPath(ns), '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":123}}');
      expectStatus(res, 400, 'BadRequest',
        'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string');
    });

    it('refuses a body of another kind than the resource', async () => {
      const res = await request(server, saPath(ns), { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'wrong-kind' } } });
      expectStatus(res, 400, 'BadRequest');
      assert.ok(res.json.message.startsWith('Secret in version "v1" cannot be handled as a ServiceAccount'), res.json.message);
      assert.equal((await request(server, saPath(ns, 'wrong-kind'))).status, 404);
      assert.equal((await request(server, secretPath(ns, 'wrong-kind'))).status, 404);
    });

    it('refuses a body of another API version than the endpoint', async () => {
      const res = await request(server, evPath(ns), {
        method: 'POST',
        body: {
          apiVersion: 'v1', kind: 'Event', metadata: { name: 'core-event' },
          involvedObject: { kind: 'ServiceAccount', namespace: ns, name: 'default' }, reason: 'R', message: 'm',
        },
      });
      expectStatus(res, 400, 'BadRequest', 'the API version in the data (v1) does not match the expected API version (events.orch.io/v1)');
    });

    it('refuses a PUT whose body names another object than the URL', async () => {
      const created = await request(server, saPath(ns), { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'b' } } });
      assert.equal(created.status, 201);
      const res = await request(server, saPath(ns, 'b'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, name: 'a' } } });
      expectStatus(res, 400, 'BadRequest', 'the name of the object (a) does not match the name on the URL (b)');
    });

    it('refuses a body whose namespace differs from the URL, on create and on update', async () => {
      const post = await request(server, saPath(ns), { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'elsewhere', namespace: 'default' } } });
      expectStatus(post, 400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
      assert.equal((await request(server, saPath('default', 'elsewhere'))).status, 404);
      const put = await request(server, saPath(ns, 'elsewhere'), { method: 'PUT', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'elsewhere', namespace: 'default' } } });
      expectStatus(put, 400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    });
  });

  describe('field validation', () => {
    const withUnknown = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name }, foo: 'bar' });

    it('by default (Warn) creates and answers a Warning header per unknown field', async () => {
      const res = await rawPost(server, saPath(ns), withUnknown('warned'));
      assert.equal(res.status, 201, res.body);
      assert.equal(res.headers.warning, '299 - "unknown field \\"foo\\""');
      assert.equal(res.json.foo, undefined);
      const nested = await rawPost(server, saPath(ns), JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'warned-nested', bogus: 1 } }));
      assert.equal(nested.status, 201, nested.body);
      assert.equal(nested.headers.warning, '299 - "unknown field \\"metadata.bogus\\""');
    });

    it('with fieldValidation=Warn explicitly behaves as the default', async () => {
      const res = await rawPost(server, `${saPath(ns)}?fieldValidation=Warn`, withUnknown('warned-explicit'));
      assert.equal(res.status, 201, res.body);
      assert.equal(res.headers.warning, '299 - "unknown field \\"foo\\""');
    });

    it('with fieldValidation=Strict refuses unknown fields with 400', async () => {
      const res = await rawPost(server, `${saPath(ns)}?fieldValidation=Strict`, withUnknown('strict'));
      expectStatus(res, 400, 'BadRequest',
        'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: strict decoding error: unknown field "foo"');
      assert.equal((await request(server, saPath(ns, 'strict'))).status, 404);
    });

    it('with fieldValidation=Ignore creates without a warning', async () => {
      const res = await rawPost(server, `${saPath(ns)}?fieldValidation=Ignore`, withUnknown('ignored'));
      assert.equal(res.status, 201, res.body);
      assert.equal(res.headers.warning, undefined);
    });

    it('keeps only the declared fields of nested references (ObjectReference, LocalObjectReference, EventSource, EventSeries)', async () => {
      const account = {
        apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nested-refs' },
        secrets: [{ kind: 'Secret', name: 's', fieldPath: 'data', extra: 1 }], imagePullSecrets: [{ name: 'p', namespace: 'other' }],
      };
      const warned = await rawPost(server, saPath(ns), JSON.stringify(account));
      assert.equal(warned.status, 201, warned.body);
      assert.equal(warned.headers.warning, '299 - "unknown field \\"secrets[0].extra\\"", 299 - "unknown field \\"imagePullSecrets[0].namespace\\""');
      assert.deepEqual(warned.json.secrets, [{ kind: 'Secret', name: 's', fieldPath: 'data' }]);
      assert.deepEqual(warned.json.imagePullSecrets, [{ name: 'p' }]);
      const strict = await rawPost(server, `${saPath(ns)}?fieldValidation=Strict`, JSON.stringify({ ...account, metadata: { name: 'nested-strict' } }));
      expectStatus(strict, 400, 'BadRequest', 'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: '
        + 'strict decoding error: unknown field "secrets[0].extra", unknown field "imagePullSecrets[0].namespace"');

      const event = {
        apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'nested-refs' }, eventTime: '2024-01-01T00:00:00.000000Z',
        reportingController: 'example.com/c', reportingInstance: 'i', action: 'Act', reason: 'Why', type: 'Normal',
        regarding: { kind: 'ServiceAccount', namespace: ns, name: 'nested-refs', labels: {} },
        related: { kind: 'Secret', name: 's', selfLink: '/x' },
        deprecatedSource: { component: 'c', node: 'n' },
      };
      const strictEvent = await rawPost(server, `${evPath(ns)}?fieldValidation=Strict`, JSON.stringify(event));
      expectStatus(strictEvent, 400, 'BadRequest', 'Event in version "v1" cannot be handled as a Event: strict decoding error: '
        + 'unknown field "regarding.labels", unknown field "related.selfLink", unknown field "deprecatedSource.node"');
      const series = await rawPost(server, `${evPath(ns)}?fieldValidation=Strict`,
        JSON.stringify({ ...event, regarding: { kind: 'ServiceAccount', namespace: ns, name: 'x' }, related: undefined, deprecatedSource: undefined, series: { count: 2, lastObservedTime: '2024-01-01T00:00:01.000000Z', state: 'Ongoing' } }));
      expectStatus(series, 400, 'BadRequest', 'Event in version "v1" cannot be handled as a Event: strict decoding error: unknown field "series.state"');
    });

    const dup = (name: string) => `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"${name}","name":"${name}"}}`;

    it('reports a duplicate field as a Warning by default', async () => {
      const warned = await rawPost(server, saPath(ns), dup('dupfield'));
      assert.equal(warned.status, 201, warned.body);
      assert.equal(warned.headers.warning, '299 - "duplicate field \\"metadata.name\\""');
    });

    it('refuses a duplicate field with fieldValidation=Strict', async () => {
      const strict = await rawPost(server, `${saPath(ns)}?fieldValidation=Strict`, dup('dupstrict'));
      expectStatus(strict, 400, 'BadRequest',
        'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: strict decoding error: duplicate field "metadata.name"');
      assert.equal((await request(server, saPath(ns, 'dupstrict'))).status, 404);
    });

    it('applies on update too', async () => {
      const created = await request(server, saPath(ns), { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'upd-strict' } } });
      const body = JSON.stringify({ ...created.json, foo: 'bar' });
      const strict = await rawPost(server, `${saPath(ns, 'upd-strict')}?fieldValidation=Strict`, body, 'application/json', 'PUT');
      expectStatus(strict, 400, 'BadRequest',
        'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: strict decoding error: unknown field "foo"');
      const warned = await rawPost(server, saPath(ns, 'upd-strict'), body, 'application/json', 'PUT');
      assert.equal(warned.status, 200, warned.body);
      assert.equal(warned.headers.warning, '299 - "unknown field \\"foo\\""');
    });

    it('refuses an unknown fieldValidation value with 422', async () => {
      const res = await rawPost(server, `${saPath(ns)}?fieldValidation=Bogus`, withUnknown('bogus-directive'));
      expectStatus(res, 422, 'Invalid',
        'CreateOptions.meta.orch.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"');
      assert.deepEqual(res.json.details, {
        group: 'meta.orch.io', kind: 'CreateOptions',
        causes: [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"', field: 'fieldValidation' }],
      });
    });
  });

  describe('options', () => {
    const unsupportedDryRun = 'Unsupported value: []string{"Foo"}: supported values: "All"';

    it('refuses dryRun=Foo on create with 422 Invalid CreateOptions', async () => {
      const create = await request(server, `${saPath(ns)}?dryRun=Foo`, { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'dry-foo-create' } } });
      expectStatus(create, 422, 'Invalid', `CreateOptions.meta.orch.io "" is invalid: dryRun: ${unsupportedDryRun}`);
      assert.deepEqual(create.json.details, {
        group: 'meta.orch.io', kind: 'CreateOptions',
        causes: [{ reason: 'FieldValueNotSupported', message: unsupportedDryRun, field: 'dryRun' }],
      });
      assert.equal((await request(server, saPath(ns, 'dry-foo-create'))).status, 404);
    });

    it('refuses dryRun=Foo on update with 422 Invalid UpdateOptions', async () => {
      const created = await request(server, saPath(ns), { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'dry-foo-update' } } });
      assert.equal(created.status, 201);
      const update = await request(server, `${saPath(ns, 'dry-foo-update')}?dryRun=Foo`, { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, labels: { a: 'b' } } } });
      assert.equal(update.status, 422, update.body);
      assert.equal(update.json.reason, 'Invalid');
      assert.equal(update.json.details.group, 'meta.orch.io');
      assert.equal(update.json.details.kind, 'UpdateOptions');
      assert.equal(update.json.details.causes[0].field, 'dryRun');
      assert.equal(update.json.details.causes[0].reason, 'FieldValueNotSupported');
      assert.equal((await request(server, saPath(ns, 'dry-foo-update'))).json.metadata.labels, undefined);
    });

    it('refuses dryRun=Foo on delete with 422 Invalid DeleteOptions', async () => {
      const created = await request(server, saPath(ns), { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'dry-foo-delete' } } });
      assert.equal(created.status, 201);
      const del = await request(server, `${saPath(ns, 'dry-foo-delete')}?dryRun=Foo`, { method: 'DELETE' });
      assert.equal(del.status, 422, del.body);
      assert.equal(del.json.reason, 'Invalid');
      assert.equal(del.json.details.group, 'meta.orch.io');
      assert.equal(del.json.details.kind, 'DeleteOptions');
      assert.equal(del.json.details.causes[0].field, 'dryRun');
      assert.equal(del.json.details.causes[0].reason, 'FieldValueNotSupported');
      assert.equal((await request(server, saPath(ns, 'dry-foo-delete'))).status, 200);
    });

    it('answers 500 to a create that carries a resourceVersion, as kube-apiserver does', async () => {
      const res = await request(server, saPath(ns), { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'with-rv', resourceVersion: '5' } } });
      expectStatus(res, 500, undefined, 'resourceVersion should not be set on objects to be created');
      assert.equal(res.json.details, undefined);
      assert.equal((await request(server, saPath(ns, 'with-rv'))).status, 404);
    });

    it('refuses an invalid label selector with 400', async () => {
      for (const selector of ['a in (b', 'a=%%', '!']) {
        const res = await request(server, `${saPath(ns)}?labelSelector=${encodeURIComponent(selector)}`);
        expectStatus(res, 400, 'BadRequest');
        assert.ok(res.json.message.length > 0);
      }
    });

    it('refuses an unsupported field selector with 400 naming the supported ones', async () => {
      const res = await request(server, `${saPath(ns)}?fieldSelector=${encodeURIComponent('spec.foo=x')}`);
      expectStatus(res, 400, 'BadRequest', '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"');
      const across = await request(server, `/api/v1/serviceaccounts?fieldSelector=${encodeURIComponent('spec.foo=x')}`);
      expectStatus(across, 400, 'BadRequest', '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"');
    });

    it('a timeout query parameter shorter than the 3 s wait for a future resourceVersion ends the request first', async () => {
      // the default --request-timeout (1m) alone would let the wait end with "Too large resource version"
      const res = await request(server, `${saPath(ns)}?resourceVersion=999999999&timeout=100ms`);
      expectStatus(res, 504, 'Timeout');
      assert.equal(res.json.message, 'Timeout: request did not complete within requested timeout - context deadline exceeded');
    });

    it('answers 504 Timeout with Retry-After for a resourceVersion far in the future', async () => {
      const started = Date.now();
      const res = await request(server, `${saPath(ns)}?resourceVersion=999999999`);
      const waited = Date.now() - started;
      expectStatus(res, 504, 'Timeout');
      assert.match(res.json.message, /^Timeout: Too large resource version: 999999999, current: \d+$/);
      assert.deepEqual(res.json.details, {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      });
      assert.equal(res.headers['retry-after'], '1');
      // a lower bound only: a timer never fires early, while a busy machine can make it late
      assert.ok(waited >= 2500, `the server waits about 3 s before giving up, waited ${waited} ms`);
    });
  });

  describe('request framing and negotiation', () => {
    it('refuses a body over 3 MiB with 413 and stores nothing', async () => {
      const limit = 3 * 1024 * 1024;
      const prefix = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"huge"},"data":{"k":"`;
      const suffix = '"}}';
      const payload = 'A'.repeat(limit + 1024 - prefix.length - suffix.length);
      const body = `${prefix}${payload}${suffix}`;
      assert.ok(Buffer.byteLength(body) > limit);
      // over a kept-alive connection, as kubectl and client-go send: the server answers before the
      // body is in and reads the rest away
      const agent = new Agent({ keepAlive: true });
      const res = await request(server, secretPath(ns), { method: 'POST', body, agent });
      agent.destroy();
      expectStatus(res, 413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
      assert.equal((await request(server, secretPath(ns, 'huge'))).status, 404);
    });

    it('lets a client that asked to close the connection read its 413 while its body still comes', async () => {
      // the server answers on the Content-Length and closes: without lingering (Go's
      // closeWriteAndWait), the body arriving after the close reset the connection, and the reset
      // discarded the answer before the client read it
      const body = Buffer.alloc(4 * 1024 * 1024, 'A');
      const url = new URL(server.url);
      const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, ALPNProtocols: ['http/1.1'] });
      await once(socket, 'secureConnect');
      const received: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.on('error', () => { /* the server may stop reading the body: what was received is checked */ });
      socket.write(`POST ${secretPath(ns)} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      socket.write(body);
      await once(socket, 'close');
      const answer = Buffer.concat(received).toString();
      assert.match(answer, /^HTTP\/1\.1 413 /);
      assert.match(answer, /"reason":"RequestEntityTooLarge"/);
    });

    it('refuses Content-Type text/plain with 415', async () => {
      const res = await rawPost(server, saPath(ns), JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'plain' } }), 'text/plain');
      expectStatus(res, 415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${servedMediaTypes}`);
      assert.equal((await request(server, saPath(ns, 'plain'))).status, 404);
    });

    it('refuses Accept: application/xml with 406', async () => {
      const res = await request(server, saPath(ns), { headers: { accept: 'application/xml' } });
      expectStatus(res, 406, 'NotAcceptable', `only the following media types are accepted: ${servedMediaTypes}`);
    });

    it('answers 405 MethodNotAllowed to POST on an object path, creating nothing', async () => {
      const post = await request(server, saPath(ns, 'some-name'), { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'some-name' } } });
      expectStatus(post, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      assert.deepEqual(post.json.details, {});
      assert.equal((await request(server, saPath(ns, 'some-name'))).status, 404);
    });

    it('answers 405 MethodNotAllowed to PUT on a collection', async () => {
      const res = await request(server, saPath(ns), { method: 'PUT', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'x' } } });
      expectStatus(res, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    });

    it('answers 405 MethodNotAllowed to DELETE on the namespaces collection (no deletecollection)', async () => {
      const res = await request(server, '/api/v1/namespaces', { method: 'DELETE' });
      expectStatus(res, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      assert.equal((await request(server, '/api/v1/namespaces/default')).status, 200);
      assert.equal((await request(server, `/api/v1/namespaces/${ns}`)).status, 200);
    });

    it('answers 404 with "the server could not find the requested resource" to unknown resources', async () => {
      for (const path of [`/api/v1/namespaces/${ns}/foos`, '/api/v1/foos', '/apis/nope.orch.io/v1/things', '/apis/events.orch.io/v2/events', '/api/v2/namespaces']) {
        const res = await request(server, path);
        expectStatus(res, 404, 'NotFound', 'the server could not find the requested resource');
        assert.deepEqual(res.json.details, {}, path);
      }
    });

    it('creates from a YAML request body', async () => {
      const yaml = 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: from-yaml\n  labels:\n    source: yaml\nautomountServiceAccountToken: false\n';
      const res = await rawPost(server, saPath(ns), yaml, 'application/yaml');
      assert.equal(res.status, 201, res.body);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.json.metadata.name, 'from-yaml');
      assert.deepEqual(res.json.metadata.labels, { source: 'yaml' });
      assert.equal(res.json.automountServiceAccountToken, false);
    });

    it('answers YAML to Accept: application/yaml, keys sorted as kube-apiserver encodes them', async () => {
      const created = await request(server, saPath(ns), { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'as-yaml' } } });
      assert.equal(created.status, 201);
      const res = await request(server, saPath(ns, 'as-yaml'), { headers: { accept: 'application/yaml' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/yaml');
      assert.equal(res.json, undefined, 'the body is not JSON');
      assert.ok(res.body.includes('\n  name: as-yaml\n'), res.body);
      assert.ok(res.body.includes(`\n  namespace: ${ns}\n`), res.body);
      assert.ok(res.body.startsWith('apiVersion: v1\nkind: ServiceAccount\nmetadata:\n'), res.body);
      assert.ok(res.body.includes(`\n  resourceVersion: "${created.json.metadata.resourceVersion}"\n`), res.body);
    });

    it('answers a list as YAML', async () => {
      const res = await request(server, saPath(ns), { headers: { accept: 'application/yaml' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/yaml');
      assert.ok(res.body.includes('kind: ServiceAccountList\n'), res.body);
      assert.ok(res.body.startsWith('apiVersion: v1\nitems:\n'), res.body);
    });

    it('answers errors as YAML when YAML is accepted', async () => {
      const missing = await request(server, saPath(ns, 'absent'), { headers: { accept: 'application/yaml' } });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers['content-type'], 'application/yaml');
      assert.ok(missing.body.includes('reason: NotFound\n'), missing.body);
      assert.ok(missing.body.startsWith('apiVersion: v1\ncode: 404\ndetails:\n'), missing.body);
    });
  });
});

describe('--request-timeout', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--request-timeout', '500ms'] }); });
  after(async () => { await server.dispose(); });

  it('ends a request that outlives it with 504 Timeout', async () => {
    // a list for a version the server has not reached waits up to 3 s, then says "Too large
    // resource version": this message shows that the 500 ms request timeout ended it first
    const res = await request(server, '/api/v1/namespaces?resourceVersion=999999999&resourceVersionMatch=NotOlderThan');
    assert.equal(res.status, 504);
    assert.equal(res.json.reason, 'Timeout');
    assert.equal(res.json.message, 'Timeout: request did not complete within requested timeout - context deadline exceeded');
  });

  it('a bad timeout query parameter is 400', async () => {
    const bad = await request(server, '/api/v1/namespaces?timeout=soon');
    assert.equal(bad.status, 400);
  });
});
