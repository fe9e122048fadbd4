/**
 * Keeps the priority-and-fairness configuration objects (Kubernetes' APF config producer and
 * ensurer, plus the Dangling condition its config controller writes):
 * - mandatory objects (exempt, catch-all) are recreated when deleted and their spec reset when
 *   changed (the exempt level's `spec.exempt` is the administrator's to set);
 * - suggested objects are created when missing and updated while their autoupdate annotation
 *   says "true", or, without one, while their spec is as created (generation 1);
 * - every FlowSchema's status says whether its priority level exists (condition Dangling).
 */
import { isDeepStrictEqual } from 'node:util';
import {
  mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels,
} from '../api/flowcontrol/bootstrap.js';
import { flowSchemaKind } from '../api/flowcontrol/flow-schema.js';
import { priorityLevelConfigurationKind } from '../api/flowcontrol/priority-level-configuration.js';
import {
  autoUpdateAnnotation, kubernetesAutoUpdateAnnotation, type Condition, type FlowSchemaObject, type PriorityLevelConfigurationObject,
} from '../api/flowcontrol/types.js';
import { storageResourceOf } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { formatTime } from '../api/schema.js';
import type { ObjectStore } from '../resource-store/object-store.js';
import type { ReadModel } from '../store/read-model.js';
import { StatusError } from '../status/status-error.js';
import { WorkQueue } from './work-queue.js';

/** the field managers Kubernetes' config producer (objects) and config consumer (Dangling conditions) write as */
const apfConfigurationManager = 'api-priority-and-fairness-config-producer-v1';
const apfStatusManager = 'api-priority-and-fairness-config-consumer-v1';
const flowSchemas = storageResourceOf(flowSchemaKind);
const priorityLevels = storageResourceOf(priorityLevelConfigurationKind);

interface Bootstrap { object: KObject; mandatory: boolean }

const bootstrapLevels = new Map<string, Bootstrap>([
  ...mandatoryPriorityLevels.map((o) => [o.metadata.name as string, { object: o, mandatory: true }] as const),
  ...suggestedPriorityLevels.map((o) => [o.metadata.name as string, { object: o, mandatory: false }] as const),
]);
const bootstrapSchemas = new Map<string, Bootstrap>([
  ...mandatoryFlowSchemas.map((o) => [o.metadata.name as string, { object: o, mandatory: true }] as const),
  ...suggestedFlowSchemas.map((o) => [o.metadata.name as string, { object: o, mandatory: false }] as const),
]);

/** The annotation's word on overwriting the spec; undefined when absent or not a boolean. */
function autoUpdate(obj: KObject): boolean | undefined {
  const value = obj.metadata.annotations?.[autoUpdateAnnotation] ?? obj.metadata.annotations?.[kubernetesAutoUpdateAnnotation];
  return value === 'true' ? true : value === 'false' ? false : undefined;
}

function danglingCondition(fs: FlowSchemaObject, levelExists: boolean): Omit<Condition, 'lastTransitionTime'> {
  const level = fs.spec?.priorityLevelConfiguration?.name ?? '';
  return levelExists
    ? { type: 'Dangling', status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists` }
    : { type: 'Dangling', status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object` };
}

export class ApfConfigurationController {
  private readonly queue: WorkQueue;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly readModel: ReadModel,
    private readonly stores: { flowSchemas: ObjectStore; priorityLevels: ObjectStore },
    onError: (err: unknown) => void,
  ) {
    this.queue = new WorkQueue((key) => this.sync(key), { workers: 1, onError });
    this.unsubscribe = readModel.onChange((changes) => {
      for (const c of changes) {
        if (c.resource === priorityLevels) {
          this.queue.add(`pl/${c.path}`);
          // schemas naming this level may have become (or stopped being) dangling
          readModel.table(flowSchemas).forEach((o, name) => {
            if ((o.object as FlowSchemaObject).spec?.priorityLevelConfiguration?.name === c.path) this.queue.add(`fs/${name}`);
          });
        } else if (c.resource === flowSchemas) {
          this.queue.add(`fs/${c.path}`);
        }
      }
    });
    for (const name of bootstrapLevels.keys()) this.queue.add(`pl/${name}`);
    for (const name of bootstrapSchemas.keys()) this.queue.add(`fs/${name}`);
    readModel.table(flowSchemas).forEach((_o, name) => this.queue.add(`fs/${name}`));
  }

  stop(): void {
    this.unsubscribe();
    this.queue.stop();
  }

  /** Resolves when every queued key has been worked (for start-up and tests). */
  idle(): Promise<void> { return this.queue.idle(); }

  private async sync(key: string): Promise<void> {
    const name = key.slice(3);
    if (key.startsWith('pl/')) {
      await this.ensure(this.stores.priorityLevels, priorityLevels, bootstrapLevels.get(name), name);
    } else {
      await this.ensure(this.stores.flowSchemas, flowSchemas, bootstrapSchemas.get(name), name);
      await this.updateDangling(name);
    }
  }

  private context(manager = apfConfigurationManager) { return { now: Date.now(), dryRun: false, manager }; }

  private async ensure(store: ObjectStore, table: string, wanted: Bootstrap | undefined, name: string): Promise<void> {
    if (!wanted) return;
    const current = this.readModel.get(table, name)?.object;
    if (!current) {
      const object = structuredClone(wanted.object);
      object.metadata.annotations = { [autoUpdateAnnotation]: 'true' };
      try {
        await store.create(undefined, object, this.context());
      } catch (err) {
        if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
      }
      return;
    }
    // mandatory objects are always put back; suggested ones as their annotation says, or without
    // one only while nobody changed their spec (generation 1), as Kubernetes' ensurer decides
    const allowed = wanted.mandatory || (autoUpdate(current) ?? current.metadata.generation === 1);
    if (!allowed || isDeepStrictEqual(this.wantedSpec(wanted, current), (current as { spec?: unknown }).spec)) return;
    await store.modify(undefined, name, this.context(), (live) => {
      const spec = this.wantedSpec(wanted, live);
      if (isDeepStrictEqual(spec, (live as { spec?: unknown }).spec)) return undefined;
      const annotations = { ...(live.metadata.annotations ?? {}), [autoUpdateAnnotation]: 'true' };
      return { ...live, metadata: { ...live.metadata, annotations }, spec } as KObject;
    });
  }

  /** The spec to keep: the bootstrap one, with the exempt level's `exempt` settings as the administrator set them. */
  private wantedSpec(wanted: Bootstrap, current: KObject): unknown {
    const spec = structuredClone((wanted.object as PriorityLevelConfigurationObject).spec);
    const exempt = (current as PriorityLevelConfigurationObject).spec?.exempt;
    if (current.kind === 'PriorityLevelConfiguration' && spec?.type === 'Exempt' && exempt) spec.exempt = exempt;
    return spec;
  }

  private async updateDangling(name: string): Promise<void> {
    const fs = this.readModel.get(flowSchemas, name)?.object as FlowSchemaObject | undefined;
    if (!fs) return;
    const level = fs.spec?.priorityLevelConfiguration?.name ?? '';
    const want = danglingCondition(fs, this.readModel.get(priorityLevels, level) !== undefined);
    const have = fs.status?.conditions?.find((c) => c.type === 'Dangling');
    if (have && have.status === want.status && have.reason === want.reason && have.message === want.message) return;
    await this.stores.flowSchemas.modify(undefined, name, this.context(apfStatusManager), (live) => {
      const current = live as FlowSchemaObject;
      const conditions = (current.status?.conditions ?? []).filter((c) => c.type !== 'Dangling');
      const previous = current.status?.conditions?.find((c) => c.type === 'Dangling');
      const changed = previous?.status !== want.status;
      conditions.push({ ...want, lastTransitionTime: changed || !previous?.lastTransitionTime ? formatTime(Date.now()) : previous.lastTransitionTime });
      return { ...current, status: { ...(current.status ?? {}), conditions } } as KObject;
    }, 'status');
  }
}
