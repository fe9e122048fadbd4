/**
 * Conversion webhooks called by service reference, as kube-apiserver's DefaultServiceResolver
 * calls them: https://<name>.<namespace>.svc:<port><path>, the certificate verified against the
 * CRD's caBundle for the server name <name>.<namespace>.svc. The server runs with a preload that
 * resolves `.svc` names to loopback (and `*.unresolvable.svc` to nothing), where the test serves
 * the webhook with a certificate for `converter.webhooks.svc`.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { servingCert, testCa, type TestCa } from '../support/certs.js';
import { waitEstablished } from '../support/crds.js';
import { request, startServer, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const preload = new URL('../support/svc-dns-preload.js', import.meta.url).href;

/** v1 and v2 of a Gadget differ only in a field's name: v1 `size`, v2 `length`. */
function convert(obj: any, to: string): any {
  const out = structuredClone(obj);
  const spec = out.spec ?? {};
  const [from, into] = to.endsWith('/v2') ? ['size', 'length'] : ['length', 'size'];
  if (from in spec) { spec[into] = spec[from]; delete spec[from]; }
  out.apiVersion = to;
  return out;
}

function gadgetCrd(group: string, service: Record<string, unknown>, ca: TestCa): any {
  const schema = (field: string) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { [field]: { type: 'integer' } } } } } });
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `gadgets.${group}` },
    spec: {
      group, scope: 'Cluster', names: { plural: 'gadgets', kind: 'Gadget' },
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service, caBundle: Buffer.from(ca.pem).toString('base64') } } },
      versions: [
        { name: 'v1', served: true, storage: true, schema: schema('size') },
        { name: 'v2', served: true, storage: false, schema: schema('length') },
      ],
    },
  };
}

async function createCrd(server: TestServer, crd: any): Promise<any> {
  const res = await request(server, crdPath, { method: 'POST', body: crd });
  assert.equal(res.status, 201, res.body);
  await waitEstablished(server, crd.metadata.name);
  return res.json;
}

async function createGadget(server: TestServer, group: string, name: string, size: number): Promise<void> {
  const res = await request(server, `/apis/${group}/v1/gadgets`, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name }, spec: { size } } });
  assert.equal(res.status, 201, res.body);
}

describe('conversion webhook by service reference', () => {
  let server: TestServer;
  let webhook: Server;
  let webhookPort: number;
  let ca: TestCa;
  const calls: { path: string; serverName: string | false | null }[] = [];

  before(async () => {
    ca = testCa('svc-conversion');
    const serving = servingCert('svc-conversion-webhook', ca, ['converter.webhooks.svc']);
    webhook = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
      calls.push({ path: req.url ?? '', serverName: (req.socket as TLSSocket).servername });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { uid, desiredAPIVersion, objects } = JSON.parse(Buffer.concat(chunks).toString('utf8')).request;
        const response = { uid, convertedObjects: objects.map((o: any) => convert(o, desiredAPIVersion)), result: { status: 'Success' } };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response }));
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    webhookPort = (webhook.address() as AddressInfo).port;
    server = await startServer({ nodeArgs: ['--import', preload] });
  });
  after(async () => {
    await server?.dispose();
    await new Promise((resolve) => webhook?.close(resolve));
  });

  it('calls https://<name>.<namespace>.svc:<port><path>, verifying the certificate for that name', async () => {
    const group = 'svc.example.com';
    await createCrd(server, gadgetCrd(group, { namespace: 'webhooks', name: 'converter', path: '/convert', port: webhookPort }, ca));
    await createGadget(server, group, 'g1', 3);
    const v2 = await request(server, `/apis/${group}/v2/gadgets/g1`);
    assert.equal(v2.status, 200, v2.body);
    assert.deepEqual([v2.json.apiVersion, v2.json.spec], [`${group}/v2`, { length: 3 }]);
    const created = await request(server, `/apis/${group}/v2/gadgets`, { method: 'POST', body: { apiVersion: `${group}/v2`, kind: 'Gadget', metadata: { name: 'g2' }, spec: { length: 7 } } });
    assert.equal(created.status, 201, created.body);
    assert.deepEqual((await request(server, `/apis/${group}/v1/gadgets/g2`)).json.spec, { size: 7 });
    assert.ok(calls.length >= 2, JSON.stringify(calls));
    for (const call of calls) assert.deepEqual(call, { path: '/convert?timeout=30s', serverName: 'converter.webhooks.svc' });
  });

  it('refuses a certificate that does not name the service, and one from another CA', async () => {
    const group = 'othername.example.com';
    // `other.webhooks.svc` reaches the same webhook, whose certificate does not name it
    await createCrd(server, gadgetCrd(group, { namespace: 'webhooks', name: 'other', path: '/convert', port: webhookPort }, ca));
    await createGadget(server, group, 'g1', 1);
    const res = await request(server, `/apis/${group}/v2/gadgets/g1`);
    assert.equal(res.status, 500, res.body);
    assert.equal(res.json.message, `Internal error occurred: conversion webhook for ${group}/v1, Kind=Gadget failed: Post "https://other.webhooks.svc:${webhookPort}/convert?timeout=30s": `
      + 'tls: failed to verify certificate: x509: certificate is valid for localhost, converter.webhooks.svc, not other.webhooks.svc');

    const foreignGroup = 'foreignca.example.com';
    await createCrd(server, gadgetCrd(foreignGroup, { namespace: 'webhooks', name: 'converter', path: '/convert', port: webhookPort }, testCa('svc-conversion-foreign')));
    await createGadget(server, foreignGroup, 'g1', 1);
    const foreign = await request(server, `/apis/${foreignGroup}/v2/gadgets/g1`);
    assert.equal(foreign.status, 500, foreign.body);
    assert.match(foreign.json.message, /: tls: failed to verify certificate: x509: certificate signed by unknown authority$/);
  });

  it('defaults the port to 443 and answers Kubernetes\' failure when the service does not resolve', async () => {
    const group = 'nowhere.example.com';
    const crd = await createCrd(server, gadgetCrd(group, { namespace: 'unresolvable', name: 'converter', path: '/convert' }, ca));
    assert.equal(crd.spec.conversion.webhook.clientConfig.service.port, 443);
    await createGadget(server, group, 'g1', 1);
    const res = await request(server, `/apis/${group}/v2/gadgets/g1`);
    assert.equal(res.status, 500, res.body);
    assert.equal(res.json.reason, 'InternalError');
    assert.equal(res.json.message, `Internal error occurred: conversion webhook for ${group}/v1, Kind=Gadget failed: Post "https://converter.unresolvable.svc:443/convert?timeout=30s": dial tcp: lookup converter.unresolvable.svc: no such host`);
    // the storage version needs no conversion
    assert.equal((await request(server, `/apis/${group}/v1/gadgets/g1`)).status, 200);

    // Kubernetes does not validate the form of a service's name: one that makes no URL fails the call
    const badName = 'badname.example.com';
    await createCrd(server, gadgetCrd(badName, { namespace: 'webhooks', name: 'bad name', path: '/convert', port: webhookPort }, ca));
    await createGadget(server, badName, 'g1', 1);
    const bad = await request(server, `/apis/${badName}/v2/gadgets/g1`);
    assert.equal(bad.status, 500, bad.body);
    assert.equal(bad.json.message, `Internal error occurred: conversion webhook for ${badName}/v1, Kind=Gadget failed: parse "https://bad name.webhooks.svc:${webhookPort}/convert?timeout=30s": invalid URL`);
  });

  it('validates the service reference with Kubernetes\' causes', async () => {
    const crd = gadgetCrd('invalid.example.com', { namespace: '', name: '', path: 'convert//Now/', port: 70000 }, ca);
    const res = await request(server, crdPath, { method: 'POST', body: crd });
    assert.equal(res.status, 422, res.body);
    const causes = res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    const at = 'spec.conversion.webhook.clientConfig.service';
    assert.deepEqual(causes, [
      `${at}.name: Required value`,
      `${at}.namespace: Required value`,
      `${at}.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive`,
      `${at}.path: Invalid value: "convert//Now/": must start with a '/'`,
      // as Kubernetes does, the first character is dropped whatever it is: segment[0] is "onvert"
      `${at}.path: Invalid value: "convert//Now/": segment[1] may not be empty`,
      `${at}.path: Invalid value: "convert//Now/": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
    const both = gadgetCrd('both.example.com', { namespace: 'webhooks', name: 'converter' }, ca);
    both.spec.conversion.webhook.clientConfig.url = 'https://example.com/convert';
    const res2 = await request(server, crdPath, { method: 'POST', body: both });
    assert.equal(res2.status, 422, res2.body);
    assert.deepEqual(res2.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), ['spec.conversion.webhook.clientConfig: Required value: exactly one of url or service is required']);
  });

  it('validates a webhook url with Kubernetes\' causes', async () => {
    const crd = gadgetCrd('badurl.example.com', {}, ca);
    crd.spec.conversion.webhook.clientConfig = { url: 'http://user@example.com/convert?x=1#top' };
    const res = await request(server, crdPath, { method: 'POST', body: crd });
    assert.equal(res.status, 422, res.body);
    const at = 'spec.conversion.webhook.clientConfig.url';
    assert.deepEqual(res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
      `${at}: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      `${at}: Invalid value: "user": user information is not permitted in the URL`,
      `${at}: Invalid value: "top": fragments are not permitted in the URL`,
      `${at}: Invalid value: "x=1": query parameters are not permitted in the URL`,
    ]);
  });
});
