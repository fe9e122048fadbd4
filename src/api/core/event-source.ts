/** core/v1 EventSource, which events.orch.io/v1 Events carry too (as `deprecatedSource`). */
import { s, type StructSchema } from '../schema.js';

export const eventSourceSchema: StructSchema = s.struct('EventSource', {
  component: s.string('Component from which the event is generated.'),
  host: s.string('Node name on which the event is generated.'),
});
eventSourceSchema.proto = { component: 1, host: 2 };
