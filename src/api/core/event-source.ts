/** core/v1 EventSource, which events.orch.io/v1 Events carry too (as `deprecatedSource`). */
import { s } from '../schema/builtin-structural.js';

export const eventSourceStructural = s.struct('EventSource', {
  component: s.string('Component from which the event is generated.'),
  host: s.string('Node name on which the event is generated.'),
}, undefined, { proto: { component: 1, host: 2 } });
