// k6/metrics: Counter, Gauge, Rate, Trend (https://grafana.com/docs/k6/latest/javascript-api/k6-metrics/)
import { state } from './state.mjs';

class Metric {
  constructor(type, name, isTime) {
    if (typeof name !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/.test(name)) throw new Error(`invalid metric name ${name}`);
    if (state.metrics.has(name)) throw new Error(`metric ${name} defined twice`);
    this.name = name;
    this.type = type;
    this.isTime = Boolean(isTime);
    this.values = [];
    state.metrics.set(name, this);
  }

  add(value, tags) {
    if (typeof value !== 'number' && typeof value !== 'boolean') throw new TypeError(`${this.name}.add: not a number: ${value}`);
    if (tags !== undefined && typeof tags !== 'object') throw new TypeError(`${this.name}.add: tags must be an object`);
    this.values.push(Number(value));
    return true;
  }
}

export class Counter extends Metric { constructor(name, isTime) { super('counter', name, isTime); } }
export class Gauge extends Metric { constructor(name, isTime) { super('gauge', name, isTime); } }
export class Rate extends Metric { constructor(name, isTime) { super('rate', name, isTime); } }
export class Trend extends Metric { constructor(name, isTime) { super('trend', name, isTime); } }

export default { Counter, Gauge, Rate, Trend };
