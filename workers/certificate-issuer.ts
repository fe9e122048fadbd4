/**
 * The certificate issuer's thread: issues what it is asked (workerData), answers once, and ends,
 * taking the ASN.1 library's heap with it (src/auth/certificate-issuer.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { issueCertificates, type IssueRequest } from '../src/auth/certificate-issuer.js';

if (!parentPort) throw new Error('workers/certificate-issuer.js must run as a worker thread');
const port = parentPort;
issueCertificates(workerData as IssueRequest).then(
  (issued) => port.postMessage({ issued }),
  (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) }),
);
