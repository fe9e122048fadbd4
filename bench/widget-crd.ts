/**
 * The Widget CustomResourceDefinition the custom-resource benchmarks share (custom-resources,
 * crd-scale, watch-fanout --cr 1): a 20-field spec validated by 3 CEL rules, registered in any
 * group, and a wait for its Established condition. The objects themselves are `widgetBody` in
 * bench/harness.ts (the load processes write them).
 */
import { call, type agentFor } from './support.js';

/** A CRD `<plural>.<group>` serving `kind` at v1, namespaced, with the 20-field schema and 3 CEL rules. */
export function widgetCrd(group: string, plural: string, kind: string): string {
  const properties: Record<string, unknown> = {
    replicas: { type: 'integer', minimum: 0, maximum: 1000 }, minReplicas: { type: 'integer', minimum: 0 }, maxReplicas: { type: 'integer', maximum: 1000 },
    mode: { type: 'string', enum: ['fast', 'safe'] }, owner: { type: 'string', maxLength: 63, pattern: '^[a-z0-9-]+$' },
  };
  for (let f = 0; f < 15; f++) properties[`field${f}`] = { type: 'string', maxLength: 256 };
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${group}` },
    spec: {
      group, scope: 'Namespaced', names: { plural, kind },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: {
          type: 'object', properties,
          'x-kubernetes-validations': [
            { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
            { rule: 'self.replicas >= self.minReplicas && self.replicas <= self.maxReplicas', message: 'replicas out of range' },
            { rule: "self.mode == 'safe' || self.owner.startsWith('team-')", message: 'fast mode needs a team owner' },
          ],
        } } } },
      }],
    },
  });
}

type Server = Parameters<typeof agentFor>[0];

/** Waits (up to 10 s) until the CRD `name` reports Established=True. */
export async function established(server: Server, agent: ReturnType<typeof agentFor>, name: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const r = await call(server, agent, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (r.status === 200 && JSON.parse(r.text).status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`${name} not established`);
}
