/**
 * protobufjs message types of the kinds, built from their declarations: a StructSchema's `proto`
 * map (Kubernetes 1.32's generated.proto numbers) is the one source of truth, and kinds added to
 * the registry while the server runs get their types on first use. protobufjs compiles an
 * encoder per type (reflection with generated code); kinds.proto under this folder is the same
 * definitions rendered as text (render.ts), checked against the declarations by a test.
 *
 * The wire shapes Kubernetes' gogo marshaller writes are kept by how fields are declared:
 *   - map<string, V> becomes a repeated entry message {key = 1; value = 2}, so entries can be
 *     written sorted by key, as gogo writes them (protobufjs' map fields keep insertion order);
 *   - a list inside a map or list is a message of its items at field 1 (authentication's ExtraValue);
 *   - Time / MicroTime and FieldsV1 / RawExtension are runtime.proto's Time and RawExtension.
 */
import { existsSync, readFileSync } from 'node:fs';
import type * as protobuf from 'protobufjs';
import type { Schema, StructSchema } from '../../api/schema.js';
import { protobufjs } from '../libraries.js';
import { ProtobufError } from './errors.js';

// beside this module in dist/ (scripts/build.mjs copies it there, so a server runs from dist/
// alone), else in the source tree (a bare `tsc -b` build)
const besideModule = new URL('./runtime.proto', import.meta.url);
const runtimeProto = readFileSync(existsSync(besideModule) ? besideModule : new URL('../../../../src/codec/proto/runtime.proto', import.meta.url), 'utf8');
const parseRuntimeProto = (): protobuf.Root => protobufjs().parse(runtimeProto, { keepCase: true }).root;

interface RuntimeTypes { Unknown: protobuf.Type; TypeMeta: protobuf.Type; WatchEvent: protobuf.Type }
let runtime: { root: protobuf.Root; types: RuntimeTypes } | undefined;

/** runtime.proto's root, parsed (with protobufjs loaded) on the first protobuf body or event. */
function runtimeRoot(): { root: protobuf.Root; types: RuntimeTypes } {
  if (runtime) return runtime;
  const root = parseRuntimeProto();
  const types = { Unknown: root.lookupType('orch.runtime.Unknown'), TypeMeta: root.lookupType('orch.runtime.TypeMeta'), WatchEvent: root.lookupType('orch.runtime.WatchEvent') };
  return (runtime = { root, types });
}

export const runtimeTypes = (): RuntimeTypes => runtimeRoot().types;

export interface FieldPlan { name: string; number: number; schema: Schema }

/** A struct's message: its protobufjs type and its fields, in field-number order and by number. */
export interface MessagePlan {
  schema: StructSchema;
  type: protobuf.Type;
  fields: FieldPlan[];
  byNumber: (FieldPlan | undefined)[];
}

/**
 * The message types of a set of kinds, in one protobufjs namespace. The codec keeps one for the
 * process (`planOf`'s); render.ts builds a fresh one to write kinds.proto.
 */
export class MessageTypes {
  private readonly plans = new WeakMap<StructSchema, MessagePlan>();
  readonly namespace: protobuf.Namespace;
  private readonly library = protobufjs();

  constructor(root: protobuf.Root = parseRuntimeProto()) {
    this.namespace = root.define('orch.kinds');
  }

  /** The message of a struct, built (with the messages it refers to) once per schema. */
  planOf(schema: StructSchema): MessagePlan {
    const known = this.plans.get(schema);
    if (known) return known;
    if (!schema.proto) throw new ProtobufError(`${schema.goName} has no protobuf field numbers`);
    const type = new this.library.Type(this.freshName(schema.goName));
    const fields: FieldPlan[] = [];
    const byNumber: (FieldPlan | undefined)[] = [];
    for (const [name, number] of Object.entries(schema.proto)) {
      const fieldSchema = schema.fields[name];
      if (fieldSchema === undefined || !Number.isInteger(number) || number < 1 || byNumber[number]) {
        throw new ProtobufError(`${schema.goName}: invalid protobuf field number ${number} for ${name}`);
      }
      const field = { name, number, schema: fieldSchema };
      fields.push(field);
      byNumber[number] = field;
    }
    fields.sort((a, b) => a.number - b.number);
    const plan: MessagePlan = { schema, type, fields, byNumber };
    // registered before its fields resolve: a struct may (indirectly) refer to itself
    this.plans.set(schema, plan);
    this.namespace.add(type);
    try {
      for (const f of fields) type.add(this.fieldOf(type, f.name, f.number, f.schema));
    } catch (err) {
      this.plans.delete(schema);
      this.namespace.remove(type);
      throw err;
    }
    return plan;
  }

  /** A type name not yet used in the namespace (two groups may both declare an `Event`). */
  private freshName(base: string): string {
    let name = base;
    for (let i = 2; this.namespace.get(name); i++) name = `${base}_${i}`;
    return name;
  }

  private fieldOf(owner: protobuf.Type, name: string, number: number, schema: Schema): protobuf.Field {
    if (schema.type === 'list') return new this.library.Field(name, number, this.valueTypeName(owner, name, schema.items), 'repeated');
    if (schema.type === 'map') return new this.library.Field(name, number, this.entryTypeName(owner, name, schema.values), 'repeated');
    return new this.library.Field(name, number, this.valueTypeName(owner, name, schema), 'optional');
  }

  /** The protobuf type of one value (a field's, a list item's, a map value's). */
  private valueTypeName(owner: protobuf.Type, name: string, schema: Schema): string {
    switch (schema.type) {
      case 'string': return 'string';
      case 'bytes': return 'bytes';
      case 'boolean': return 'bool';
      case 'integer': return schema.format;
      case 'time': case 'microTime': return '.orch.runtime.Time';
      case 'any': return '.orch.runtime.RawExtension';
      case 'struct': return this.planOf(schema).type.fullName;
      case 'list': {
        const items = new this.library.Type(this.freshName(`${owner.name}_${name}Items`));
        items.add(new this.library.Field('items', 1, this.valueTypeName(items, 'items', schema.items), 'repeated'));
        this.namespace.add(items);
        return items.fullName;
      }
      case 'map':
        throw new ProtobufError(`cannot encode ${owner.name}.${name}: protobuf has no nested maps`);
    }
  }

  private entryTypeName(owner: protobuf.Type, name: string, values: Schema): string {
    const entry = new this.library.Type(this.freshName(`${owner.name}_${name}Entry`));
    entry.add(new this.library.Field('key', 1, 'string', 'optional'));
    entry.add(new this.library.Field('value', 2, this.valueTypeName(entry, 'value', values), 'optional'));
    this.namespace.add(entry);
    return entry.fullName;
  }
}

/** The process's message types: every codec call of every kind, built-in or registered later. */
let messageTypes: MessageTypes | undefined;
export const planOf = (schema: StructSchema): MessagePlan => (messageTypes ??= new MessageTypes(runtimeRoot().root)).planOf(schema);
