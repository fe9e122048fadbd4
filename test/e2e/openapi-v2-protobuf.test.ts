/**
 * /openapi/v2 in gnostic's protobuf encoding, as client-go's DiscoveryClient.OpenAPISchema asks
 * for it: the bytes read back by protoc (an independent decoder) against our openapi-v2.proto, and
 * by kubectl 1.32, whose client-side validation of a `kind: List` needs it. The kubectl suite is
 * skipped with a reason without kubectl, except under CI.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createNamespace } from '../support/api.js';
import { kubectlFor, kubectlMissingReason, type Kubectl } from '../support/kubectl.js';
import { request, startServer, type TestServer } from '../support/server.js';
import { raw } from '../support/wire.js';

const protobufAccept = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const protobufType = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const protoDir = fileURLToPath(new URL('../../../src/codec/proto/', import.meta.url));

/** A string as protoc prints it: quoted, C escapes, bytes past ASCII in octal. */
function unquote(quoted: string): string {
  const bytes: number[] = [];
  const text = quoted.slice(1, -1);
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') { bytes.push(text.charCodeAt(i)); continue; }
    const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1))?.[0];
    if (octal) { bytes.push(parseInt(octal, 8)); i += octal.length; continue; }
    const c = text[++i];
    bytes.push(({ n: 10, t: 9, r: 13 } as Record<string, number>)[c] ?? c.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** protoc's text format as a tree: each field name → its values, nested messages as trees. */
type Text = Map<string, Array<string | Text>>;

function decodeDocument(bytes: Buffer): Text {
  const out = spawnSync('protoc', [`--proto_path=${protoDir}`, '--decode=openapi.v2.Document', 'openapi-v2.proto'], { input: bytes, maxBuffer: 64 << 20 });
  assert.equal(out.status, 0, String(out.stderr));
  const root: Text = new Map();
  const stack: Text[] = [root];
  const push = (top: Text, name: string, v: string | Text) => { if (!top.has(name)) top.set(name, []); top.get(name)!.push(v); };
  for (const line of String(out.stdout).split('\n').map((l) => l.trim()).filter(Boolean)) {
    const top = stack[stack.length - 1];
    let m;
    if ((m = /^(\w+) \{$/.exec(line))) {
      const child: Text = new Map();
      push(top, m[1], child);
      stack.push(child);
    } else if (line === '}') {
      stack.pop();
    } else if ((m = /^(\w+): (.*)$/.exec(line))) {
      push(top, m[1], m[2].startsWith('"') ? unquote(m[2]) : m[2]);
    }
  }
  return root;
}

const one = (t: Text | undefined, name: string): Text => {
  const v = t?.get(name)?.[0];
  assert.ok(v instanceof Map, `no message ${name}`);
  return v;
};
const str = (t: Text, name: string): string | undefined => t.get(name)?.[0] as string | undefined;
/**
 * The length-delimited fields of a message by number, read by hand: field numbers checked without
 * any .proto (varint and fixed-width fields are skipped).
 */
function lengthDelimited(bytes: Buffer): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[at++];
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const tag = varint();
    const wireType = tag & 7;
    if (wireType === 0) varint();
    else if (wireType === 1) at += 8;
    else if (wireType === 5) at += 4;
    else {
      assert.equal(wireType, 2, `wire type ${wireType}`);
      const length = varint();
      const field = Math.floor(tag / 8);
      if (!out.has(field)) out.set(field, []);
      out.get(field)!.push(bytes.subarray(at, at + length));
      at += length;
    }
  }
  return out;
}

/** The value of a repeated {name, value} pair by its name. */
const named = (pairs: Array<string | Text> | undefined, name: string): Text => {
  const pair = (pairs ?? []).find((p) => p instanceof Map && str(p, 'name') === name);
  assert.ok(pair instanceof Map, `no entry ${name}`);
  return one(pair, 'value');
};

describe('/openapi/v2 in protobuf', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.dispose(); });

  it('answers client-go\'s Accept with gnostic\'s Document, read by protoc', async () => {
    const res = await raw(server, '/openapi/v2', { accept: protobufAccept });
    assert.equal(res.status, 200, res.body.toString());
    assert.equal(res.headers['content-type'], protobufType);
    assert.equal(res.headers.vary, 'Accept');
    const doc = decodeDocument(res.body);
    assert.equal(str(doc, 'swagger'), '2.0');
    assert.equal(str(one(doc, 'info'), 'title'), 'Kubernetes');

    const configMap = named(one(doc, 'definitions').get('additional_properties'), 'io.orch.api.core.v1.ConfigMap');
    assert.deepEqual(one(configMap, 'type').get('value'), ['object']);
    const properties = one(configMap, 'properties').get('additional_properties') ?? [];
    assert.deepEqual(properties.map((p) => str(p as Text, 'name')), ['apiVersion', 'binaryData', 'data', 'immutable', 'kind', 'metadata']);
    const data = named(properties, 'data');
    assert.deepEqual(one(data, 'type').get('value'), ['object']);
    assert.deepEqual(one(one(one(data, 'additional_properties'), 'schema'), 'type').get('value'), ['string']);
    assert.equal(str(named(properties, 'metadata'), '_ref'), '#/definitions/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    // what kubectl maps the GroupVersionKind to the model by: YAML text in Any.yaml (Any.value stays unset)
    const gvk = named(configMap.get('vendor_extension'), 'x-kubernetes-group-version-kind');
    assert.equal(str(gvk, 'yaml'), '- group: ""\n  kind: ConfigMap\n  version: v1\n');
    assert.equal(gvk.has('value'), false);

    // a list with its patch metadata: ServiceAccount.secrets
    const sa = named(one(doc, 'definitions').get('additional_properties'), 'io.orch.api.core.v1.ServiceAccount');
    const secrets = named(one(sa, 'properties').get('additional_properties'), 'secrets');
    assert.deepEqual(one(secrets, 'type').get('value'), ['array']);
    assert.equal(str(one(secrets, 'items').get('schema')?.[0] as Text, '_ref'), '#/definitions/io.orch.api.core.v1.ObjectReference');
    assert.equal(str(named(secrets.get('vendor_extension'), 'x-kubernetes-patch-strategy'), 'yaml'), 'merge\n');
    assert.equal(str(named(secrets.get('vendor_extension'), 'x-kubernetes-list-type'), 'yaml'), 'map\n');

    // an operation with its parameters and responses
    const configMaps = named(one(doc, 'paths').get('path'), '/api/v1/namespaces/{namespace}/configmaps');
    const create = one(configMaps, 'post');
    assert.equal(str(create, 'operation_id'), 'createCoreV1NamespacedConfigMap');
    const body = one(one(create.get('parameters')?.[0] as Text, 'parameter'), 'body_parameter');
    assert.equal(str(one(body, 'schema'), '_ref'), '#/definitions/io.orch.api.core.v1.ConfigMap');
    const namespace = (configMaps.get('parameters') ?? []).map((p) => one(one(p as Text, 'parameter'), 'non_body_parameter'))
      .find((p) => p.has('path_parameter_sub_schema'));
    assert.equal(str(one(namespace, 'path_parameter_sub_schema'), 'name'), 'namespace');
    const created = named(one(create, 'responses').get('response_code'), '201');
    assert.equal(str(one(one(one(created, 'response'), 'schema'), 'schema'), '_ref'), '#/definitions/io.orch.api.core.v1.ConfigMap');

    // gnostic's numbers, read without our .proto: Document.swagger = 1, definitions = 9 {additional_properties = 1
    // {name = 1, value = 2}}, Schema.properties = 25, Schema.vendor_extension = 31 {name = 1, value = 2 {yaml = 2}}
    const top = lengthDelimited(res.body);
    assert.equal(top.get(1)?.[0].toString(), '2.0');
    const entries = lengthDelimited(top.get(9)![0]).get(1)!.map(lengthDelimited);
    const rawConfigMap = lengthDelimited(entries.find((e) => e.get(1)?.[0].toString() === 'io.orch.api.core.v1.ConfigMap')!.get(2)![0]);
    assert.equal(lengthDelimited(rawConfigMap.get(25)![0]).get(1)?.length, 6);
    const extension = rawConfigMap.get(31)!.map(lengthDelimited).find((e) => e.get(1)?.[0].toString() === 'x-kubernetes-group-version-kind');
    assert.equal(lengthDelimited(extension!.get(2)![0]).get(2)?.[0].toString(), '- group: ""\n  kind: ConfigMap\n  version: v1\n');
  });

  it('takes the dotted spelling too, keeps JSON the default, shares the JSON ETag and answers 304 to it', async () => {
    const dotted = await raw(server, '/openapi/v2', { accept: protobufType });
    assert.equal(dotted.status, 200);
    assert.equal(dotted.headers['content-type'], protobufType);
    const jsonDoc = await request(server, '/openapi/v2');
    assert.equal(jsonDoc.headers['content-type'], 'application/json');
    assert.equal(jsonDoc.json.swagger, '2.0');
    const preferred = await raw(server, '/openapi/v2', { accept: `${protobufAccept}, application/json` });
    assert.equal(preferred.headers['content-type'], protobufType);
    assert.equal((await request(server, '/openapi/v2', { headers: { accept: `${protobufAccept};q=0.5, application/json` } })).headers['content-type'], 'application/json');
    // kube-openapi gives both forms the hash of the JSON (responses vary by Accept)
    assert.equal(dotted.headers.etag, jsonDoc.headers.etag);
    const again = await raw(server, '/openapi/v2', { accept: protobufAccept, 'if-none-match': String(dotted.headers.etag) });
    assert.equal(again.status, 304);
    assert.equal(again.headers.vary, 'Accept');
    assert.equal(again.body.length, 0);
    const refused = await request(server, '/openapi/v2', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    assert.equal(refused.status, 406);
    // the v3 documents stay JSON only
    assert.equal((await request(server, '/openapi/v3/api/v1', { headers: { accept: 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf' } })).status, 406);
  });
});

const missing = kubectlMissingReason();
if (missing) {
  if (process.env.CI) it('kubectl is installed (required under CI)', () => assert.fail(missing));
  else process.stderr.write(`skipping the kubectl List suite: ${missing}\n`);
}

const ns = 'kt-list';

function configMap(name: string, data: string): string {
  return `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: ${name}
    namespace: ${ns}
  data:
    ${data}
`;
}

describe('kubectl 1.32 apply -f of a kind: List (validated with /openapi/v2)', { skip: missing ?? false }, () => {
  let server: TestServer;
  let work: string;
  let kubectl: Kubectl;

  before(async () => {
    server = await startServer();
    work = mkdtempSync(join(tmpdir(), 'orch-kubectl-list-'));
    kubectl = kubectlFor(server, work);
    await createNamespace(server, ns);
  });
  after(async () => {
    await server?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('creates both items, then applies what `get -o yaml` printed', async () => {
    const file = join(work, 'list.yaml');
    writeFileSync(file, `apiVersion: v1\nkind: List\nitems:\n${configMap('first', 'a: "1"')}${configMap('second', 'b: "2"')}`);
    const out = await kubectl.ok(['apply', '-f', file]);
    assert.deepEqual(out.trim().split('\n'), ['configmap/first created', 'configmap/second created']);
    assert.deepEqual((await request(server, `/api/v1/namespaces/${ns}/configmaps/second`)).json.data, { b: '2' });

    const printed = join(work, 'printed.yaml');
    writeFileSync(printed, await kubectl.ok(['get', 'cm', '-n', ns, '-o', 'yaml']));
    const again = await kubectl.ok(['apply', '-f', printed]);
    assert.match(again, /^configmap\/first (unchanged|configured)$/m);
    assert.match(again, /^configmap\/second (unchanged|configured)$/m);
  });

  it('reports an unknown field of an item by its name, from client-side validation', async () => {
    const file = join(work, 'invalid.yaml');
    writeFileSync(file, `apiVersion: v1\nkind: List\nitems:\n${configMap('third', 'c: "3"')}  bogusField: true\n`);
    const res = await kubectl.run(['apply', '-f', file]);
    assert.equal(res.code, 1, `${res.stdout}\n${res.stderr}`);
    assert.match(res.stderr, /error validating "[^"]*invalid\.yaml": error validating data: ValidationError\(ConfigMap\): unknown field "bogusField" in io\.orch\.api\.core\.v1\.ConfigMap/);
    assert.equal((await request(server, `/api/v1/namespaces/${ns}/configmaps/third`)).status, 404, 'nothing is created');
  });
});
