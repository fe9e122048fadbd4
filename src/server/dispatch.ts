/**
 * The end of the chain: a non-resource path goes to its endpoint (discovery, OpenAPI, health,
 * version); a resource path to the resource handler for the kind the registry serves there; a
 * WebSocket upgrade to a watch streamed one event per message.
 */
import type { IncomingMessage } from 'node:http';
import { WebSocketServer } from 'ws';
import type { KindDeclaration } from '../api/kind.js';
import type { ApiRegistry } from '../api/registry/api-registry.js';
import type { NonResourceHandler } from '../http/non-resource.js';
import type { RequestInfo } from '../http/request-info.js';
import type { ResourceHandler } from '../http/resource-handler.js';
import { errors } from '../status/status-error.js';
import type { Handler } from './filter.js';
import { noteDeprecation, type DeprecatedRequestHook } from './deprecation.js';
import type { RequestContext, Upgrade } from './request-context.js';

export interface DispatchDeps {
  kinds: ApiRegistry;
  resources: ResourceHandler;
  nonResource: NonResourceHandler;
  onWebSocketError(err: unknown): void;
  /** told of every request to a deprecated version (the apiserver_requested_deprecated_apis gauge) */
  onDeprecatedRequest?: DeprecatedRequestHook;
}

/** what a request answered in the call that served it returns: one settled promise serves them all */
const answered = Promise.resolve();

function kindOf(kinds: ApiRegistry, info: RequestInfo): KindDeclaration {
  if (!info.isResourceRequest || (info.apiPrefix === 'api' && info.apiGroup)) throw errors.pathNotFound();
  const kind = kinds.lookup(info.apiPrefix === 'api' ? '' : info.apiGroup, info.apiVersion, info.resource);
  if (!kind) throw errors.pathNotFound();
  return kind;
}

export function dispatcher(deps: DispatchDeps): Handler {
  const webSockets = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const upgrades = new WeakMap<IncomingMessage, Upgrade>();
  // the pipeline's response headers (Audit-Id, ...) go on the 101 answer too
  webSockets.on('headers', (headers: string[], req: IncomingMessage) => {
    for (const [name, value] of upgrades.get(req)?.headers ?? []) headers.push(`${name}: ${value}`);
  });

  const upgrade = async (ctx: RequestContext, up: Upgrade): Promise<void> => {
    const kind = kindOf(deps.kinds, ctx.info);
    const run = deps.resources.planWebSocketWatch(ctx.query, ctx.info, kind);
    upgrades.set(up.req, up);
    await new Promise<void>((resolve) => {
      webSockets.handleUpgrade(up.req, up.socket, up.head, (ws) => {
        run(ws).catch((err: unknown) => { deps.onWebSocketError(err); ws.terminate(); });
        resolve();
      });
    });
  };

  // the chain's last step, run by every request: a plain function (no async frame); what it throws
  // the chain turns into a rejection, like every filter's
  return (ctx: RequestContext): Promise<void> => {
    if (ctx.upgrade) return upgrade(ctx, ctx.upgrade);
    const ex = ctx.exchange;
    if (!ex) throw errors.pathNotFound();
    ex.user = ctx.user;
    if (!ctx.info.isResourceRequest) {
      if (!deps.nonResource.serve(ex)) throw errors.pathNotFound();
      return answered;
    }
    const kind = kindOf(deps.kinds, ctx.info);
    ex.kind = kind;
    noteDeprecation(kind, ctx.info, ctx, ex.warnings, deps.onDeprecatedRequest);
    void ex.negotiated; // an unacceptable Accept fails before any work is done
    return deps.resources.serve(ex, ctx.info, kind) ?? answered;
  };
}
