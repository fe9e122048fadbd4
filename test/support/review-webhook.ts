/**
 * A review webhook for tests (token authentication or authorization): HTTPS on loopback,
 * requiring a client certificate from its own CA, answering each review (TokenReview,
 * SubjectAccessReview) with a status that is a function of it, and recording what it was asked.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { clientCert, servingCert, testCa, type TestCa } from './certs.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Review = any;

export class ReviewWebhook {
  readonly ca: TestCa;
  url = '';
  readonly requests: Review[] = [];
  /** answers to give with an HTTP status instead of a review, first in first out */
  failures: number[] = [];
  private server: Server | undefined;

  constructor(readonly name: string, private readonly answer: (review: Review) => Review['status']) {
    this.ca = testCa(name);
  }

  async start(): Promise<this> {
    const { cert, key } = servingCert(`${this.name}-server`, this.ca);
    this.server = createServer({ cert, key, ca: this.ca.pem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        const review = JSON.parse(body) as Review;
        this.requests.push(review);
        const failure = this.failures.shift();
        if (failure) { res.statusCode = failure; res.end('{}'); return; }
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: review.kind, status: this.answer(review) }));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}/review`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** a kubeconfig for the API server to reach this webhook with a client certificate */
  writeKubeconfig(file: string): void {
    const client = clientCert(`${this.name}-apiserver`, '/CN=orch-apiserver', this.ca.crt, this.ca.key);
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    writeFileSync(file, [
      'apiVersion: v1', 'kind: Config',
      'clusters:', '- name: webhook', '  cluster:', `    server: ${this.url}`, `    certificate-authority-data: ${b64(this.ca.pem)}`,
      'users:', '- name: apiserver', '  user:', `    client-certificate-data: ${b64(client.cert)}`, `    client-key-data: ${b64(client.key)}`,
      'contexts:', '- name: webhook', '  context:', '    cluster: webhook', '    user: apiserver',
      'current-context: webhook', '',
    ].join('\n'));
  }
}
