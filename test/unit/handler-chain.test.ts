/** The pipeline's assembly and its filters alone: order, recovery, seats held until hand-off, timeouts. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import pino from 'pino';
import { chain } from '../../src/server/filter.js';
import { handlerChainFilters } from '../../src/server/handler-chain.js';
import { flowControlFilter } from '../../src/server/filters/flow-control.js';
import { recoverFilter } from '../../src/server/filters/recover.js';
import { timeoutFilter } from '../../src/server/filters/timeout.js';
import { MaxInflightLimiter } from '../../src/flowcontrol/max-inflight.js';
import { AnonymousAuthenticator } from '../../src/auth/authn/anonymous.js';
import { UnionAuthenticator } from '../../src/auth/authn/authenticator.js';
import { UnionAuthorizer } from '../../src/auth/authz/authorizer.js';
import { RequestContext } from '../../src/server/request-context.js';
import { requestInfo } from '../../src/http/request-info.js';
import { StatusError } from '../../src/status/status-error.js';
import type { Exchange } from '../../src/http/exchange.js';

/** A context over a fake response that records what was answered. */
function fakeContext(path = '/api/v1/namespaces/default/serviceaccounts', query = ''): { ctx: RequestContext; res: EventEmitter & { answered?: StatusError; headersSent: boolean; writableEnded: boolean; writableFinished: boolean; destroyed: boolean; end(): void; setHeader(): void } } {
  const res = Object.assign(new EventEmitter(), {
    headersSent: false, writableEnded: false, writableFinished: false, destroyed: false,
    answered: undefined as StatusError | undefined,
    end() { this.writableEnded = true; },
    setHeader() {},
  });
  const ex = {
    res, get sent() { return res.headersSent; }, sendError(err: StatusError) { res.answered = err; res.headersSent = true; },
    whenHandedOff(fn: () => void) { res.once('finish', fn); },
    setHeader() {},
  } as unknown as Exchange;
  const req = { method: 'GET', headers: {}, url: path } as never;
  const ctx = new RequestContext(req, path, new URLSearchParams(query), undefined, ex, undefined, Date.now());
  ctx.info = requestInfo('GET', path, new URLSearchParams(query));
  ctx.user = { name: 'jane', groups: ['system:authenticated'] };
  return { ctx, res };
}

const silent = pino({ level: 'silent' });

describe('the handler chain', () => {
  it('is assembled in Kubernetes\' order', () => {
    const names = handlerChainFilters({
      log: silent, maxRequestBodyBytes: 0, authenticator: new UnionAuthenticator([], { anonymous: new AnonymousAuthenticator() }),
      authorizer: new UnionAuthorizer([]), flowControl: new MaxInflightLimiter({ readOnly: 1, mutating: 1 }), requestTimeoutMs: 1000,
    }).map((f) => f.name);
    assert.deepEqual(names, ['request-log', 'recover', 'audit-init', 'request-info', 'body-limit', 'authentication', 'impersonation', 'flow-control', 'authorization', 'timeout']);
  });

  it('recovers from a handler bug with a 500 Status and logs it with its stack', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'error' }, { write: (l: string) => { lines.push(l); } });
    const { ctx, res } = fakeContext();
    await chain([{ name: 'recover', filter: recoverFilter(log) }], async () => { throw new TypeError('boom'); })(ctx);
    assert.equal(res.answered?.code, 500);
    assert.equal(res.answered?.message, 'Internal error occurred: boom');
    assert.match(lines.join(''), /TypeError: boom/);
  });

  it('turns a synchronous throw of a filter or the handler into a rejection the earlier filters see', async () => {
    const seen: string[] = [];
    const watching = { name: 'watching', filter: (ctx: RequestContext, next: (c: RequestContext) => Promise<void>) => next(ctx).then(() => { seen.push('resolved'); }, (err: StatusError) => { seen.push(`rejected ${err.code}`); throw err; }) };
    const throwing = { name: 'throwing', filter: () => { throw new StatusError(403, 'Forbidden', 'no'); } };
    const { ctx, res } = fakeContext();
    await chain([{ name: 'recover', filter: recoverFilter(silent) }, watching, throwing], async () => {})(ctx);
    assert.deepEqual(seen, ['rejected 403'], 'the filter before the throw saw it as a rejection');
    assert.equal(res.answered?.code, 403);
    const bare = fakeContext();
    await assert.rejects(chain([], () => { throw new StatusError(404, 'NotFound', 'gone'); })(bare.ctx), (e: StatusError) => e.code === 404);
  });

  it('answers a StatusError as it is, without logging it as a bug', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'error' }, { write: (l: string) => { lines.push(l); } });
    const { ctx, res } = fakeContext();
    await chain([{ name: 'recover', filter: recoverFilter(log) }], async () => { throw new StatusError(409, 'Conflict', 'no'); })(ctx);
    assert.equal(res.answered?.code, 409);
    assert.equal(lines.length, 0);
  });

  it('holds a flow-control seat until the response is handed to the socket', async () => {
    const limiter = new MaxInflightLimiter({ readOnly: 1, mutating: 1 });
    const first = fakeContext();
    await chain([{ name: 'flow-control', filter: flowControlFilter(limiter) }], async () => {})(first.ctx);
    const second = fakeContext();
    await assert.rejects(chain([{ name: 'flow-control', filter: flowControlFilter(limiter) }], async () => {})(second.ctx), (e: StatusError) => e.code === 429);
    first.res.emit('finish');
    await new Promise((r) => setImmediate(r));
    const third = fakeContext();
    await chain([{ name: 'flow-control', filter: flowControlFilter(limiter) }], async () => {})(third.ctx);
  });

  it('holds an upgrade\'s flow-control seat while it is handled (it has no response to hand off)', async () => {
    const limiter = new MaxInflightLimiter({ readOnly: 1, mutating: 1 });
    const path = '/api/v1/namespaces/default/serviceaccounts';
    const upgrade = new RequestContext({ method: 'GET', headers: {}, url: path } as never, path, new URLSearchParams(), undefined, undefined,
      { req: {} as never, socket: {} as never, head: Buffer.alloc(0), headers: new Map() }, Date.now());
    upgrade.info = requestInfo('GET', path, new URLSearchParams());
    upgrade.user = { name: 'jane', groups: ['system:authenticated'] };
    let finish!: () => void;
    const handled = chain([{ name: 'flow-control', filter: flowControlFilter(limiter) }], () => new Promise<void>((r) => { finish = r; }))(upgrade);
    await new Promise((r) => setImmediate(r));
    await assert.rejects(chain([{ name: 'flow-control', filter: flowControlFilter(limiter) }], async () => {})(fakeContext().ctx), (e: StatusError) => e.code === 429);
    finish();
    await handled;
    await chain([{ name: 'flow-control', filter: flowControlFilter(limiter) }], async () => {})(fakeContext().ctx);
  });

  it('exempts long-running requests from the in-flight limit', async () => {
    const limiter = new MaxInflightLimiter({ readOnly: 1, mutating: 1 });
    const held = fakeContext();
    await chain([{ name: 'flow-control', filter: flowControlFilter(limiter) }], async () => {})(held.ctx);
    const watch = fakeContext('/api/v1/namespaces/default/serviceaccounts', 'watch=true');
    await chain([{ name: 'flow-control', filter: flowControlFilter(limiter) }], async () => {})(watch.ctx);
  });

  it('answers 504 when the handler outlives its deadline, and swallows its late failure', async () => {
    const { ctx } = fakeContext('/api/v1/namespaces', 'timeout=10ms');
    let fail: (e: Error) => void = () => {};
    const late = new Promise<void>((_, reject) => { fail = reject; });
    await assert.rejects(chain([{ name: 'timeout', filter: timeoutFilter(60_000) }], () => late)(ctx), (e: StatusError) => e.code === 504);
    fail(new Error('too late')); // must not become an unhandled rejection
    await new Promise((r) => setImmediate(r));
  });

  it('refuses a malformed timeout before calling the handler', async () => {
    const { ctx } = fakeContext('/api/v1/namespaces', 'timeout=abc');
    let called = false;
    await assert.rejects(chain([{ name: 'timeout', filter: timeoutFilter(60_000) }], async () => { called = true; })(ctx), (e: StatusError) => e.code === 400);
    assert.equal(called, false);
  });
});
