/**
 * The verbs on a resource path: decode and check what the client sent, call the kind's
 * ObjectStore, and answer in the negotiated encoding.
 */
import { goQuote } from '../api/go-quote.js';
import { apiVersionOf, type KindDeclaration, type SubresourceView } from '../api/kind.js';
import { isValidPathSegmentName } from '../api/validation/names.js';
import { deleteOptionsSchema, type KObject } from '../api/meta.js';
import { decodeBody, decodeObject, parseBody } from '../codec/body-decoder.js';
import { decodeCbor } from '../codec/cbor.js';
import { fromYaml } from '../codec/yaml.js';
import { serverSideApply, conflictError } from '../patch/apply.js';
import { acceptedPatchTypes, applyJsonPatch, patchTypeOf } from '../patch/json-patch.js';
import { applyMergePatch } from '../patch/merge-patch.js';
import { decodePatchBody } from '../patch/patch-body.js';
import { applyStrategicMergePatch } from '../patch/strategic-merge.js';
import { managerFromUserAgent } from '../patch/managed-fields.js';
import { parseResourceVersion, type ObjectStore, type WriteContext } from '../resource-store/object-store.js';
import { resetFields, statusResetFields } from '../resource-store/object-preparation.js';
import type { ResourceStores } from '../resource-store/resource-stores.js';
import { errors, fieldErrorBody, fieldErrors, formatFieldError, StatusError } from '../status/status-error.js';
import { header, type Exchange } from './exchange.js';
import { readBody } from './request-body.js';
import { negotiateBody } from './negotiation.js';
import { deleteOptionsFrom, parseBoolParam, parseListQuery, parseWriteQuery } from './query.js';
import type { RequestInfo } from './request-info.js';
import { planWatch, runWatch, servedTransport, serveWatch, webSocketTransport, type WatchDeps } from './watch-handler.js';
import { VirtualCreates, type VirtualCreateDeps } from './virtual-create.js';
import type { WebSocket } from 'ws';

export interface ResourceDeps extends WatchDeps, VirtualCreateDeps {
  stores: ResourceStores;
}

/** Which verbs each path shape serves (kube-apiserver registers no route for the others: 405). */
function allowedOnPath(kind: KindDeclaration, info: RequestInfo): boolean {
  // the legacy /watch/ paths are registered for GET only
  if (info.legacyWatch && info.method !== 'GET') return false;
  // status: get, patch, update; finalize (a namespace's): update only
  if (info.subresource) return info.subresource === 'finalize' ? info.verb === 'update' : ['get', 'patch', 'update'].includes(info.verb);
  // create and the collection verbs have no name; the object verbs need one
  if (info.name ? info.verb === 'create' : info.verb === 'update' || info.verb === 'patch') return false;
  const crossNamespace = kind.namespaced && !info.namespace;
  if (crossNamespace) return info.verb === 'list' || info.verb === 'watch';
  return kind.verbs.includes(info.verb as KindDeclaration['verbs'][number]);
}

/**
 * The storage key functions' check (NamespaceKeyFunc / NoNamespaceKeyFunc): a name from the path
 * may not be `.` or `..` nor contain `/` or `%`; the namespace segment is held to the same rule.
 */
function checkPathNames(info: RequestInfo): void {
  for (const [what, value] of [['Name', info.name], ['Namespace', info.namespace]] as const) {
    const msgs = value ? isValidPathSegmentName(value) : [];
    if (msgs.length) throw errors.badRequest(`${what} parameter invalid: ${goQuote(value)}: ${msgs.join(';')}`);
  }
}

export class ResourceHandler {
  private readonly virtualCreates: VirtualCreates;

  constructor(private readonly deps: ResourceDeps) {
    this.virtualCreates = new VirtualCreates(deps);
  }

  /**
   * Serves one resource request. Not an async function: the verbs' own promises go back as they
   * are (an async function would adopt each into one more promise), and a GET answered from the
   * read model returns nothing to wait for. What it throws, the chain turns into a rejection.
   */
  serve(ex: Exchange, info: RequestInfo, kind: KindDeclaration): Promise<void> | undefined {
    const store = this.deps.stores.of(kind);
    if (kind.namespaced && info.name && !info.namespace) throw errors.pathNotFound();
    if (!kind.namespaced && info.namespace && kind.resource !== 'namespaces') throw errors.pathNotFound();
    checkPathNames(info);
    // creates that store nothing: a kind that only answers (only its collection is routed), a subresource that issues
    if (kind.virtualCreate) {
      if (info.name) throw errors.pathNotFound();
      if (info.verb !== 'create') throw errors.methodNotAllowed();
      return this.virtualCreates.create(ex, kind, kind.namespaced ? info.namespace : undefined);
    }
    if (info.subresource && kind.subresourceCreate?.[info.subresource]) {
      if (info.verb !== 'create') throw errors.methodNotAllowed();
      return this.virtualCreates.createOn(ex, store, info.subresource, kind.namespaced ? info.namespace : undefined, info.name);
    }
    if (info.subresource && !kind.subresources?.[info.subresource]) throw errors.pathNotFound();
    if (!allowedOnPath(kind, info)) throw errors.methodNotAllowed();
    const namespace = kind.namespaced ? info.namespace : undefined;
    const view = info.subresource ? kind.subresourceViews?.[info.subresource] : undefined;
    if (view) return this.serveView(ex, store, view, namespace, info);

    switch (info.verb) {
      case 'get': return this.get(ex, store, namespace, info.name);
      case 'list': return this.list(ex, store, kind, namespace);
      case 'watch': return serveWatch(ex, info, kind, store, this.deps);
      case 'create': return this.create(ex, store, kind, namespace);
      case 'update': return this.update(ex, store, kind, namespace, info.name, info.subresource || undefined);
      case 'delete': return this.delete(ex, store, namespace, info.name);
      case 'deletecollection': return this.deleteCollection(ex, store, kind, namespace);
      case 'patch': return this.patch(ex, store, kind, namespace, info.name, info.subresource || undefined);
      default: throw errors.methodNotAllowed();
    }
  }

  /** A watch over an upgraded WebSocket: validated before the upgrade, run after it. */
  planWebSocketWatch(query: URLSearchParams, info: RequestInfo, kind: KindDeclaration): (ws: WebSocket) => Promise<void> {
    if (info.verb !== 'watch') throw errors.badRequest('only watch requests can be served over a WebSocket');
    if (kind.namespaced && info.name && !info.namespace) throw errors.pathNotFound();
    checkPathNames(info);
    const plan = planWatch(query, info, kind, this.deps.stores.of(kind), this.deps, 'json');
    const store = this.deps.stores.of(kind);
    return (ws) => runWatch(plan, servedTransport(kind, store, webSocketTransport(ws, this.deps.output, plan.spec.encoding !== 'json')), this.deps);
  }

  private writeContext(ex: Exchange, manager: string | undefined, dryRun: boolean): WriteContext {
    return { now: ex.now, dryRun, manager: manager ?? managerFromUserAgent(header(ex.req, 'user-agent')), user: ex.user, audit: ex.audit };
  }

  private async decode(ex: Exchange, kind: KindDeclaration, validation: 'Strict' | 'Warn' | 'Ignore'): Promise<KObject> {
    const encoding = negotiateBody(header(ex.req, 'content-type'), ex.offered);
    const body = await readBody(ex.req, this.deps.maxRequestBodyBytes);
    const decoded = decodeBody(kind, body, encoding, validation);
    ex.audit?.requestObject(decoded.object);
    ex.warnings.push(...decoded.warnings);
    return decoded.object;
  }

  private get(ex: Exchange, store: ObjectStore, namespace: string | undefined, name: string): Promise<void> | undefined {
    const rv = ex.query.get('resourceVersion');
    if (rv) return this.getAt(ex, store, namespace, name, rv);
    const latest = store.getLatest(namespace, name);
    // from the read model at once, usually: no promise between the lookup and the answer
    if (latest instanceof Promise) return latest.then((object) => ex.sendObject(200, object));
    ex.sendObject(200, latest);
    return undefined;
  }

  private async getAt(ex: Exchange, store: ObjectStore, namespace: string | undefined, name: string, rv: string): Promise<void> {
    if (rv !== '0') await store.waitForRevision(parseResourceVersion(rv));
    ex.sendObject(200, await store.read(namespace, name));
  }

  private async list(ex: Exchange, store: ObjectStore, kind: KindDeclaration, namespace: string | undefined): Promise<void> {
    const result = await store.list(parseListQuery(ex.query, namespace), ex.now);
    const meta: Record<string, unknown> = { resourceVersion: String(result.revision) };
    if (result.continue) meta.continue = result.continue;
    if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
    ex.sendList(kind.listKind, apiVersionOf(kind), meta, result.items);
  }

  /** The object's namespace must agree with the URL's; an empty one takes the URL's. */
  private checkNamespace(obj: KObject, kind: KindDeclaration, namespace: string | undefined): void {
    if (!kind.namespaced) { delete obj.metadata.namespace; return; }
    if (obj.metadata.namespace && obj.metadata.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    obj.metadata.namespace = namespace;
  }

  private async create(ex: Exchange, store: ObjectStore, kind: KindDeclaration, namespace: string | undefined): Promise<void> {
    const w = parseWriteQuery(ex.query, 'CreateOptions');
    const obj = await this.decode(ex, kind, w.fieldValidation);
    this.checkNamespace(obj, kind, namespace);
    const created = await store.create(namespace, obj, this.writeContext(ex, w.fieldManager, w.dryRun));
    ex.sendObject(201, created);
  }

  private async update(ex: Exchange, store: ObjectStore, kind: KindDeclaration, namespace: string | undefined, name: string, subresource?: string): Promise<void> {
    const w = parseWriteQuery(ex.query, 'UpdateOptions');
    const obj = await this.decode(ex, kind, w.fieldValidation);
    if (obj.metadata.name !== name) {
      throw errors.badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${name})`);
    }
    this.checkNamespace(obj, kind, namespace);
    const { object, created } = await store.update(namespace, name, obj, this.writeContext(ex, w.fieldManager, w.dryRun), subresource);
    ex.sendObject(created ? 201 : 200, object);
  }

  /**
   * PATCH in every form: JSON patch, merge patch and strategic merge patch are applied to the
   * current object (again on every retry of a raced write) and the result is checked like a
   * body; an apply patch is merged by server-side apply, creating the object if it is missing.
   */
  private async patch(ex: Exchange, store: ObjectStore, kind: KindDeclaration, namespace: string | undefined, name: string, subresource?: string): Promise<void> {
    const type = patchTypeOf(header(ex.req, 'content-type'), acceptedPatchTypes({ cbor: ex.offered.some((o) => o.encoding === 'cbor'), strategicMerge: !kind.decodeUnstructured }));
    const w = parseWriteQuery(ex.query, 'PatchOptions');
    const force = parseBoolParam(ex.query, 'force');
    const apply = type === 'application/apply-patch+yaml' || type === 'application/apply-patch+cbor';
    if (apply && !w.fieldManager) {
      throw errors.invalid({ group: 'meta.orch.io', kind: 'PatchOptions' }, '', [fieldErrors.required('fieldManager', 'is required for apply patch')]);
    }
    if (!apply && force !== undefined) {
      throw errors.invalid({ group: 'meta.orch.io', kind: 'PatchOptions' }, '', [fieldErrors.forbidden('force', 'may not be specified for non-apply patch')]);
    }
    const body = await readBody(ex.req, this.deps.maxRequestBodyBytes);
    const ctx = this.writeContext(ex, w.fieldManager, w.dryRun);

    if (apply) {
      let applied: unknown;
      try {
        applied = type === 'application/apply-patch+cbor' ? decodeCbor(body) : fromYaml(body.toString('utf8'));
      } catch (err) {
        throw errors.badRequest(`error decoding YAML: ${(err as Error).message.split('\n')[0]}`);
      }
      if (!applied || typeof applied !== 'object' || Array.isArray(applied)) throw errors.badRequest('error decoding YAML: the applied configuration must be an object');
      ex.audit?.requestPatch(applied);
      const config = applied as KObject;
      config.metadata ??= {};
      if (config.metadata.name && config.metadata.name !== name) {
        throw errors.badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
      }
      if (kind.namespaced && config.metadata.namespace && config.metadata.namespace !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      const { object, created } = await store.apply(namespace, name, ctx, (live) => {
        const result = serverSideApply({
          kind, live, applied: config, manager: ctx.manager, force: force ?? false, now: ctx.now,
          resetFields: subresource === 'status' ? statusResetFields(kind, config) : resetFields(kind), subresource,
        });
        if ('conflicts' in result) throw conflictError(result.conflicts);
        const merged = result.object;
        merged.metadata.name = name;
        if (kind.namespaced) merged.metadata.namespace = namespace;
        return merged;
      }, subresource);
      ex.sendObject(created ? 201 : 200, object);
      return;
    }

    const patch = decodePatchBody(type, body, w.fieldValidation);
    ex.audit?.requestPatch(patch);
    const warnings = new Set<string>();
    const transform = (current: KObject): KObject => {
      const patched = type === 'application/json-patch+json' ? applyJsonPatch(current, patch, { fieldValidation: w.fieldValidation })
        : type === 'application/merge-patch+json' ? applyMergePatch(current, patch, { fieldValidation: w.fieldValidation })
          : applyStrategicMergePatch(current, patch, kind.schema);
      try {
        const decoded = decodeObject(kind, patched, w.fieldValidation);
        for (const warning of decoded.warnings) warnings.add(warning);
        return decoded.object;
      } catch (err) {
        // a patched object of the wrong shape is an invalid patch (strict-validation failures stay 400)
        if (err instanceof StatusError && err.code === 400 && !err.message.includes('strict decoding error')) {
          const invalid = fieldErrors.invalid('patch', JSON.stringify(patched), err.message);
          throw new StatusError(422, 'Invalid', ` "" is invalid: ${formatFieldError(invalid)}`, { causes: [{ reason: invalid.type, message: fieldErrorBody(invalid), field: 'patch' }] });
        }
        throw err;
      }
    };
    const result = await store.patch(namespace, name, ctx, transform, subresource);
    ex.warnings.push(...warnings);
    ex.sendObject(200, result);
  }

  /**
   * A subresource in another kind's representation (a custom resource's Scale): read as that
   * kind, replaced or patched as that kind, written through the subresource's projection.
   */
  private async serveView(ex: Exchange, store: ObjectStore, view: SubresourceView, namespace: string | undefined, info: RequestInfo): Promise<void> {
    const { name, subresource } = info;
    if (info.verb === 'get') {
      ex.sendObject(200, view.view((await store.getLatest(namespace, name)).object));
      return;
    }
    const w = parseWriteQuery(ex.query, info.verb === 'update' ? 'UpdateOptions' : 'PatchOptions');
    const ctx = this.writeContext(ex, w.fieldManager, w.dryRun);
    if (info.verb === 'update') {
      const body = await this.decode(ex, view.kind, w.fieldValidation);
      if (body.metadata.name !== name) {
        throw errors.badRequest(`the name of the object (${body.metadata.name ?? ''}) does not match the name on the URL (${name})`);
      }
      const { object } = await store.update(namespace, name, body, ctx, subresource);
      ex.sendObject(200, view.view(object.object));
      return;
    }
    const type = patchTypeOf(header(ex.req, 'content-type'), ['application/json-patch+json', 'application/merge-patch+json']);
    const body = await readBody(ex.req, this.deps.maxRequestBodyBytes);
    const patch = decodePatchBody(type, body, w.fieldValidation);
    const result = await store.patch(namespace, name, ctx, (current) => {
      const shown = view.view(current);
      const patched = type === 'application/json-patch+json' ? applyJsonPatch(shown, patch, { fieldValidation: w.fieldValidation }) : applyMergePatch(shown, patch, { fieldValidation: w.fieldValidation });
      return decodeObject(view.kind, patched, w.fieldValidation).object;
    }, subresource);
    ex.sendObject(200, view.view(result.object));
  }

  private async deleteOptions(ex: Exchange) {
    const body = await readBody(ex.req, this.deps.maxRequestBodyBytes);
    const parsed = body.length > 0 ? parseBody(body, negotiateBody(header(ex.req, 'content-type'), ex.offered), deleteOptionsSchema) : undefined;
    if (parsed) ex.audit?.requestObject(parsed);
    return deleteOptionsFrom(ex.query, parsed);
  }

  private async delete(ex: Exchange, store: ObjectStore, namespace: string | undefined, name: string): Promise<void> {
    const { dryRun, options } = await this.deleteOptions(ex);
    const outcome = await store.delete(namespace, name, options, this.writeContext(ex, undefined, dryRun));
    if (outcome.kind === 'status') ex.sendSuccessStatus(outcome.details);
    // kube-apiserver's one case of 202: not yet deleted, and the (deprecated) orphanDependents=false asked for cascading
    else ex.sendObject(!outcome.deleted && options.orphanDependents === false ? 202 : 200, outcome.object);
  }

  private async deleteCollection(ex: Exchange, store: ObjectStore, kind: KindDeclaration, namespace: string | undefined): Promise<void> {
    const { dryRun, options } = await this.deleteOptions(ex);
    const result = await store.deleteCollection(parseListQuery(ex.query, namespace), options, this.writeContext(ex, undefined, dryRun));
    ex.sendList(kind.listKind, apiVersionOf(kind), { resourceVersion: String(result.revision) }, result.items);
  }
}
