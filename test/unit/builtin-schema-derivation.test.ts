/**
 * Built-in kinds declare structural schemas; the internal form every generic layer reads is
 * derived from them. The expected values are the internal declarations the kinds had before they
 * were structural, written out by hand (descriptions left aside: OpenAPI's tests cover them), so a
 * Go fact the derivation dropped (a field number, a pointer, MicroTime, a patch marker, a required
 * list, atomic-ness, a struct's name) fails here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenRequestKind } from '../../src/api/authentication/token-request.js';
import { leaseKind } from '../../src/api/coordination/lease.js';
import { coreEventKind } from '../../src/api/core/event.js';
import { configMapKind } from '../../src/api/core/config-map.js';
import { eventKind } from '../../src/api/events/event.js';
import { flowSchemaKind } from '../../src/api/flowcontrol/flow-schema.js';
import { priorityLevelConfigurationKind } from '../../src/api/flowcontrol/priority-level-configuration.js';
import { objectMetaSchema } from '../../src/api/meta.js';
import { builtinKinds } from '../../src/api/registry/builtin.js';
import type { Schema, StructSchema } from '../../src/api/schema.js';
import { s } from '../../src/api/schema/builtin-structural.js';
import { parseStructural, type SchemaProblem } from '../../src/api/schema/structural.js';
import { internalOf, toInternal } from '../../src/api/schema/to-internal.js';

/**
 * The schema without descriptions (and without keys left undefined), for comparing Go facts;
 * `writesZero`, derived from the others, has a test of its own.
 */
function facts(schema: Schema): unknown {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v instanceof Set) return [...v].sort();
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (k !== 'description' && k !== 'writesZero' && x !== undefined) out[k] = strip(x);
    return out;
  };
  return strip(schema);
}

/** A kind's own fields, with the apiVersion/kind/metadata every kind shares checked separately. */
function ownFields(schema: StructSchema): Record<string, unknown> {
  const { apiVersion, kind, metadata, ...own } = schema.fields;
  assert.deepEqual([apiVersion.type, kind.type], ['string', 'string']);
  assert.equal(metadata, objectMetaSchema, 'every kind shares the one ObjectMeta');
  return Object.fromEntries(Object.entries(own).map(([k, v]) => [k, facts(v)]));
}

const string = { type: 'string' };
const stringSet = { type: 'list', items: string, listType: 'set' };
const objectReference = {
  type: 'struct', goName: 'ObjectReference', structType: 'atomic',
  fields: { kind: string, namespace: string, name: string, uid: string, apiVersion: string, resourceVersion: string, fieldPath: string },
  proto: { kind: 1, namespace: 2, name: 3, uid: 4, apiVersion: 5, resourceVersion: 6, fieldPath: 7 },
};

describe('built-in schemas: the internal form derived from the structural declaration', () => {
  it('ConfigMap: string and []byte maps, field numbers', () => {
    const schema = configMapKind.schema;
    assert.equal(schema.goName, 'ConfigMap');
    assert.deepEqual(schema.proto, { metadata: 1, data: 2, binaryData: 3, immutable: 4 });
    assert.deepEqual(ownFields(schema), {
      immutable: { type: 'boolean' },
      data: { type: 'map', values: string, mapType: 'granular' },
      binaryData: { type: 'map', values: { type: 'bytes' }, mapType: 'granular' },
    });
  });

  it('Lease: pointers and MicroTimes', () => {
    const schema = leaseKind.schema;
    assert.deepEqual(schema.proto, { metadata: 1, spec: 2 });
    assert.deepEqual(ownFields(schema), {
      spec: {
        type: 'struct', goName: 'LeaseSpec',
        fields: {
          holderIdentity: { type: 'string', pointer: true },
          leaseDurationSeconds: { type: 'integer', format: 'int32', pointer: true },
          acquireTime: { type: 'microTime' },
          renewTime: { type: 'microTime' },
          leaseTransitions: { type: 'integer', format: 'int32', pointer: true },
          strategy: { type: 'string', pointer: true },
          preferredHolder: { type: 'string', pointer: true },
        },
        proto: { holderIdentity: 1, leaseDurationSeconds: 2, acquireTime: 3, renewTime: 4, leaseTransitions: 5, strategy: 6, preferredHolder: 7 },
      },
    });
  });

  it('Event: required fields, Time and MicroTime, shared atomic references', () => {
    const schema = eventKind.schema;
    assert.deepEqual(schema.required, ['eventTime']);
    assert.deepEqual(schema.proto, {
      metadata: 1, eventTime: 2, series: 3, reportingController: 4, reportingInstance: 5, action: 6, reason: 7, regarding: 8,
      related: 9, note: 10, type: 11, deprecatedSource: 12, deprecatedFirstTimestamp: 13, deprecatedLastTimestamp: 14, deprecatedCount: 15,
    });
    assert.deepEqual(ownFields(schema), {
      eventTime: { type: 'microTime' },
      series: {
        type: 'struct', goName: 'EventSeries', fields: { count: { type: 'integer', format: 'int32' }, lastObservedTime: { type: 'microTime' } },
        required: ['count', 'lastObservedTime'], proto: { count: 1, lastObservedTime: 2 },
      },
      reportingController: string, reportingInstance: string, action: string, reason: string,
      regarding: objectReference,
      related: objectReference,
      note: string, type: string,
      deprecatedSource: { type: 'struct', goName: 'EventSource', fields: { component: string, host: string }, proto: { component: 1, host: 2 } },
      deprecatedFirstTimestamp: { type: 'time' },
      deprecatedLastTimestamp: { type: 'time' },
      deprecatedCount: { type: 'integer', format: 'int32' },
    });
    assert.equal(schema.fields.regarding, schema.fields.related, 'one declared type derives to one internal object');
  });

  it('FlowSchema: nested required lists and a merge-patched map list of conditions', () => {
    const schema = flowSchemaKind.schema;
    assert.deepEqual(schema.proto, { metadata: 1, spec: 2, status: 3 });
    const nameOnly = (goName: string) => ({ type: 'struct', goName, fields: { name: string }, required: ['name'], proto: { name: 1 } });
    assert.deepEqual(ownFields(schema), {
      spec: {
        type: 'struct', goName: 'FlowSchemaSpec',
        // distinguisherMethod is a Go pointer
        heldByValue: ['priorityLevelConfiguration'],
        fields: {
          priorityLevelConfiguration: nameOnly('PriorityLevelConfigurationReference'),
          matchingPrecedence: { type: 'integer', format: 'int32' },
          distinguisherMethod: { type: 'struct', goName: 'FlowDistinguisherMethod', fields: { type: string }, required: ['type'], proto: { type: 1 } },
          rules: {
            type: 'list', listType: 'atomic',
            items: {
              type: 'struct', goName: 'PolicyRulesWithSubjects',
              fields: {
                subjects: {
                  type: 'list', listType: 'atomic',
                  items: {
                    type: 'struct', goName: 'Subject',
                    fields: {
                      kind: string, user: nameOnly('UserSubject'), group: nameOnly('GroupSubject'),
                      serviceAccount: {
                        type: 'struct', goName: 'ServiceAccountSubject', fields: { namespace: string, name: string },
                        required: ['namespace', 'name'], proto: { namespace: 1, name: 2 },
                      },
                    },
                    required: ['kind'], proto: { kind: 1, user: 2, group: 3, serviceAccount: 4 },
                  },
                },
                resourceRules: {
                  type: 'list', listType: 'atomic',
                  items: {
                    type: 'struct', goName: 'ResourcePolicyRule',
                    fields: { verbs: stringSet, apiGroups: stringSet, resources: stringSet, clusterScope: { type: 'boolean' }, namespaces: stringSet },
                    required: ['verbs', 'apiGroups', 'resources'], proto: { verbs: 1, apiGroups: 2, resources: 3, clusterScope: 4, namespaces: 5 },
                  },
                },
                nonResourceRules: {
                  type: 'list', listType: 'atomic',
                  items: {
                    type: 'struct', goName: 'NonResourcePolicyRule', fields: { verbs: stringSet, nonResourceURLs: stringSet },
                    required: ['verbs', 'nonResourceURLs'], proto: { verbs: 1, nonResourceURLs: 6 },
                  },
                },
              },
              required: ['subjects'], proto: { subjects: 1, resourceRules: 2, nonResourceRules: 3 },
            },
          },
        },
        required: ['priorityLevelConfiguration'],
        proto: { priorityLevelConfiguration: 1, matchingPrecedence: 2, distinguisherMethod: 3, rules: 4 },
      },
      status: {
        type: 'struct', goName: 'FlowSchemaStatus',
        fields: {
          conditions: {
            type: 'list', listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type',
            items: {
              type: 'struct', goName: 'FlowSchemaCondition',
              fields: { type: string, status: string, lastTransitionTime: { type: 'time' }, reason: string, message: string },
              proto: { type: 1, status: 2, lastTransitionTime: 3, reason: 4, message: 5 },
            },
          },
        },
        proto: { conditions: 1 },
      },
    });
  });

  it('ObjectMeta: field numbers and the patch markers of ownerReferences and finalizers', () => {
    const fields = objectMetaSchema.fields;
    assert.equal(objectMetaSchema.proto?.managedFields, 17);
    assert.deepEqual(facts(fields.ownerReferences), {
      type: 'list', listType: 'map', listMapKeys: ['uid'], patchStrategy: 'merge', patchMergeKey: 'uid',
      items: {
        type: 'struct', goName: 'OwnerReference',
        fields: { apiVersion: string, kind: string, name: string, uid: string, controller: { type: 'boolean' }, blockOwnerDeletion: { type: 'boolean' } },
        required: ['apiVersion', 'kind', 'name', 'uid'],
        proto: { kind: 1, name: 3, uid: 4, apiVersion: 5, controller: 6, blockOwnerDeletion: 7 },
      },
    });
    assert.deepEqual(facts(fields.finalizers), { type: 'list', items: string, listType: 'set', patchStrategy: 'merge' });
    assert.deepEqual([fields.creationTimestamp.type, fields.generation.type, fields.labels.type], ['time', 'integer', 'map']);
  });

  it('PriorityLevelConfiguration: int32 pointers under a nested struct', () => {
    const spec = priorityLevelConfigurationKind.schema.fields.spec as StructSchema;
    const limited = spec.fields.limited as StructSchema;
    assert.deepEqual(facts(limited.fields.nominalConcurrencyShares), { type: 'integer', format: 'int32', pointer: true });
    assert.deepEqual(facts(limited.fields.limitResponse), {
      type: 'struct', goName: 'LimitResponse', required: ['type'], proto: { type: 1, queuing: 2 },
      fields: {
        type: string,
        queuing: {
          type: 'struct', goName: 'QueuingConfiguration', proto: { queues: 1, handSize: 2, queueLengthLimit: 3 },
          fields: { queues: { type: 'integer', format: 'int32' }, handSize: { type: 'integer', format: 'int32' }, queueLengthLimit: { type: 'integer', format: 'int32' } },
        },
      },
    });
  });

  it('writes zero what Go writes unset: fields without omitempty, structs and times held by value', () => {
    const fieldsOf = (schema: Schema, ...path: string[]): StructSchema => {
      let at = schema;
      for (const p of path) at = (at as StructSchema).fields[p];
      return at as StructSchema;
    };
    // ObjectMeta's creationTimestamp is a metav1.Time, its deletionTimestamp a *metav1.Time
    assert.deepEqual(objectMetaSchema.writesZero, ['creationTimestamp']);
    // core/v1: the reporting fields have no omitempty; source is a struct, the timestamps times; series and related are pointers
    assert.deepEqual(coreEventKind.schema.writesZero, ['metadata', 'involvedObject', 'source', 'firstTimestamp', 'lastTimestamp', 'eventTime', 'reportingComponent', 'reportingInstance']);
    assert.deepEqual(eventKind.schema.writesZero, ['metadata', 'eventTime', 'regarding', 'deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp']);
    // LeaseSpec holds only pointers: a Lease written without them has `spec: {}`
    assert.deepEqual(leaseKind.schema.writesZero, ['metadata', 'spec']);
    assert.equal(fieldsOf(leaseKind.schema, 'spec').writesZero, undefined);
    // *BoundObjectReference without omitempty, written null; status's token and expiration required
    assert.deepEqual(fieldsOf(tokenRequestKind.schema, 'spec').writesZero, ['audiences', 'boundObjectRef']);
    assert.deepEqual(fieldsOf(tokenRequestKind.schema, 'status').writesZero, ['token', 'expirationTimestamp']);
    // custom resources are unstructured: nothing beyond the ObjectMeta every kind shares
    const cr = toInternal(parseStructural({ type: 'object', required: ['a'], properties: { a: { type: 'string' }, o: { type: 'object', properties: {} } } }, 'x', []), 'Widget');
    assert.equal((cr as StructSchema).writesZero, undefined);
  });

  it('derives each kind once from the structural schema it declares', () => {
    for (const k of builtinKinds) {
      if (k.openApiAsWritten) continue;
      assert.equal(internalOf(k.structural), k.schema, `${k.kind}: the derivation is the declaration's`);
    }
  });

  it('keeps a struct without fields a struct, and Go facts only where a node declares them', () => {
    assert.deepEqual(facts(internalOf(s.struct('Patch', {}))), { type: 'struct', goName: 'Patch', fields: {} });
    assert.deepEqual(facts(internalOf(s.any())), { type: 'any' });
    // a custom resource's strings of format date-time or byte stay strings: its schema carries no Go facts
    const problems: SchemaProblem[] = [];
    const cr = parseStructural({ type: 'object', properties: { at: { type: 'string', format: 'date-time' }, raw: { type: 'string', format: 'byte' } } }, 'x', problems);
    assert.deepEqual(problems, []);
    assert.deepEqual(facts(toInternal(cr, 'Widget')), { type: 'struct', goName: 'Widget', fields: { at: string, raw: string } });
  });
});
