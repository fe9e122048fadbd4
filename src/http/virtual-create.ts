/**
 * Creates that store nothing: a POST to a kind that answers instead of storing (TokenReview,
 * SelfSubjectReview), and a POST to a subresource of a stored object (a ServiceAccount's
 * `token`). The body is decoded and checked like any create; the kind's hook computes the answer.
 */
import { apiVersionOf, type KindDeclaration, type VirtualCreateContext } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { fillGoZeros } from '../api/schema/go-zero-values.js';
import type { Services } from '../api/services.js';
import { decodeBody, type FieldValidation } from '../codec/body-decoder.js';
import type { ObjectStore } from '../resource-store/object-store.js';
import { errors, StatusError } from '../status/status-error.js';
import { header, type Exchange } from './exchange.js';
import { readBody } from './request-body.js';
import { negotiateBody } from './negotiation.js';
import { parseWriteQuery } from './query.js';

export interface VirtualCreateDeps {
  services: Services;
  maxRequestBodyBytes: number;
}

/** The answer as Kubernetes writes it: kind and apiVersion of the kind that was asked, first, and Go's zero values. */
function answer(kind: KindDeclaration, object: KObject): KObject {
  const { kind: _k, apiVersion: _v, ...rest } = object;
  const out: KObject = { kind: kind.kind, apiVersion: apiVersionOf(kind), ...rest };
  fillGoZeros(kind.schema, out);
  return out;
}

async function decode(ex: Exchange, kinds: readonly KindDeclaration[], validation: FieldValidation, maxBytes: number): Promise<{ kind: KindDeclaration; object: KObject }> {
  const encoding = negotiateBody(header(ex.req, 'content-type'), ex.offered);
  const body = await readBody(ex.req, maxBytes);
  for (const [i, kind] of kinds.entries()) {
    try {
      const decoded = decodeBody(kind, body, encoding, validation);
      ex.warnings.push(...decoded.warnings);
      return { kind, object: decoded.object };
    } catch (err) {
      // a body naming another accepted group of the same kind decodes as that one
      const otherGroup = err instanceof StatusError && err.message.startsWith('the API version in the data (');
      if (!otherGroup || i === kinds.length - 1) throw err;
    }
  }
  throw errors.badRequest('no kind accepts this body');
}

export class VirtualCreates {
  constructor(private readonly deps: VirtualCreateDeps) {}

  private context(ex: Exchange, namespace: string | undefined, dryRun: boolean): VirtualCreateContext {
    return { now: ex.now, user: ex.user, namespace, dryRun, warnings: ex.warnings, services: this.deps.services };
  }

  /** POST to a kind served without storage. */
  async create(ex: Exchange, kind: KindDeclaration, namespace: string | undefined): Promise<void> {
    const hook = kind.virtualCreate as NonNullable<KindDeclaration['virtualCreate']>;
    const w = parseWriteQuery(ex.query, 'CreateOptions');
    const { object } = await decode(ex, [kind], w.fieldValidation, this.deps.maxRequestBodyBytes);
    const invalid = kind.validate(object);
    if (invalid.length > 0) throw errors.invalid(kind, object.metadata.name ?? '', invalid);
    const result = await hook(object, this.context(ex, namespace, w.dryRun));
    ex.sendObject(201, answer(kind, result));
  }

  /** POST to a subresource of a stored object. */
  async createOn(ex: Exchange, store: ObjectStore, subresource: string, namespace: string | undefined, name: string): Promise<void> {
    const sub = store.kind.subresourceCreate?.[subresource];
    if (!sub) throw errors.pathNotFound();
    const w = parseWriteQuery(ex.query, 'CreateOptions');
    const parent = await store.getLatest(namespace, name);
    const { kind, object } = await decode(ex, sub.kinds, w.fieldValidation, this.deps.maxRequestBodyBytes);
    // the answer is of the body's kind: protobuf and Tables encode it by that declaration
    ex.kind = kind;
    const result = await sub.create(parent.object, object, this.context(ex, namespace, w.dryRun));
    ex.sendObject(201, answer(kind, result));
  }
}
