/** The audit filters alone: their place in the chain, the Panic stage, and costing nothing at level None. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import pino from 'pino';
import { AuditContext } from '../../src/audit/audit-context.js';
import { Auditor } from '../../src/audit/auditor.js';
import { parsePolicy } from '../../src/audit/policy.js';
import { PolicyEvaluator } from '../../src/audit/policy-evaluator.js';
import type { AuditSink } from '../../src/audit/sink.js';
import type { AuditEvent } from '../../src/audit/types.js';
import { UnionAuthenticator } from '../../src/auth/authn/authenticator.js';
import { UnionAuthorizer } from '../../src/auth/authz/authorizer.js';
import { MaxInflightLimiter } from '../../src/flowcontrol/max-inflight.js';
import type { Exchange } from '../../src/http/exchange.js';
import { requestInfo } from '../../src/http/request-info.js';
import { chain } from '../../src/server/filter.js';
import { auditFilter } from '../../src/server/filters/audit.js';
import { handlerChainFilters } from '../../src/server/handler-chain.js';
import { RequestContext } from '../../src/server/request-context.js';
import { StatusError } from '../../src/status/status-error.js';

class Recorder implements AuditSink {
  events: AuditEvent[] = [];
  processEvents(events: readonly AuditEvent[]): boolean { this.events.push(...events); return true; }
  async shutdown(): Promise<void> {}
}

function auditorWith(policy: string): { auditor: Auditor; sink: Recorder } {
  const sink = new Recorder();
  return { sink, auditor: new Auditor(new PolicyEvaluator(parsePolicy(`apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n${policy}`)), sink) };
}

function context(path: string): RequestContext {
  const res = Object.assign(new EventEmitter(), { headersSent: false, writableFinished: false, destroyed: false, statusCode: 200, setHeader() {} });
  const ex = {
    res, audit: undefined,
    whenHandedOff(fn: () => void) { res.once('finish', fn); },
    setHeader() {},
    get sent() { return res.headersSent; },
    sendError(this: Exchange, err: StatusError) { this.audit?.responseStatus(err.code, err.toStatus()); res.headersSent = true; },
  } as unknown as Exchange;
  const ctx = new RequestContext({ method: 'GET', headers: {}, url: path } as never, path, new URLSearchParams(), undefined, ex, undefined, Date.now());
  ctx.info = requestInfo('GET', path, new URLSearchParams());
  ctx.user = { name: 'jane', groups: ['system:authenticated'] };
  ctx.audit = new AuditContext('id-1');
  return ctx;
}

describe('the audit filters', () => {
  it('sit around and after authentication when auditing is on, and are absent when it is off', () => {
    const parts = {
      log: pino({ level: 'silent' }), maxRequestBodyBytes: 0, authenticator: new UnionAuthenticator([]),
      authorizer: new UnionAuthorizer([]), flowControl: new MaxInflightLimiter({ readOnly: 1, mutating: 1 }), requestTimeoutMs: 1000,
    };
    assert.deepEqual(handlerChainFilters({ ...parts, auditor: auditorWith('- level: Metadata\n').auditor }).map((f) => f.name), [
      'request-log', 'recover', 'audit-init', 'request-info', 'body-limit', 'failed-authentication-audit', 'authentication', 'audit',
      'impersonation', 'flow-control', 'authorization', 'timeout',
    ]);
    assert.ok(!handlerChainFilters(parts).some((f) => f.name.includes('audit') && f.name !== 'audit-init'));
  });

  it('records the Panic stage when a later step fails with something not a StatusError, and lets it through to the recover filter', async () => {
    const { auditor, sink } = auditorWith('- level: Metadata\n');
    const ctx = context('/api/v1/namespaces');
    await assert.rejects(chain([{ name: 'audit', filter: auditFilter(auditor) }], async () => { throw new TypeError('boom'); })(ctx), TypeError);
    assert.deepEqual(sink.events.map((e) => e.stage), ['RequestReceived', 'Panic']);
    assert.deepEqual(sink.events[1].responseStatus, { code: 500, status: 'Failure', reason: 'InternalError', message: 'APIServer panic\'d: boom' });
  });

  it('answers a StatusError itself, so that ResponseComplete records what the client got', async () => {
    const { auditor, sink } = auditorWith('- level: Metadata\n');
    const ctx = context('/api/v1/namespaces/x');
    await chain([{ name: 'audit', filter: auditFilter(auditor) }], async () => { throw new StatusError(404, 'NotFound', 'namespaces "x" not found'); })(ctx);
    assert.deepEqual(sink.events.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
    assert.equal(sink.events[1].responseStatus?.code, 404);
    assert.equal(sink.events[1].responseStatus?.message, 'namespaces "x" not found');
  });

  it('records nothing, and leaves the exchange alone, for a request the policy audits at None', async () => {
    const { auditor, sink } = auditorWith('- level: None\n');
    const ctx = context('/api/v1/namespaces');
    let served = false;
    await chain([{ name: 'audit', filter: auditFilter(auditor) }], async () => { served = true; })(ctx);
    assert.ok(served);
    assert.equal(sink.events.length, 0);
    assert.equal(ctx.exchange?.audit, undefined);
    assert.equal(auditor.metrics.levelTotal.get('None'), 1);
  });
});
