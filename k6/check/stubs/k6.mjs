// k6: check, group, sleep, fail, randomSeed (https://grafana.com/docs/k6/latest/javascript-api/k6/)
import { state } from './state.mjs';

export function check(val, sets, tags) {
  if (typeof sets !== 'object' || sets === null) throw new TypeError('check(val, sets): sets must be an object');
  if (tags !== undefined && typeof tags !== 'object') throw new TypeError('check tags must be an object');
  let all = true;
  for (const [name, fn] of Object.entries(sets)) {
    const ok = typeof fn === 'function' ? Boolean(fn(val)) : Boolean(fn);
    state.checks.push({ name, ok });
    all = all && ok;
  }
  return all;
}

export function group(name, fn) {
  if (typeof name !== 'string' || typeof fn !== 'function') throw new TypeError('group(name, fn)');
  return fn();
}

export function sleep(seconds) {
  if (typeof seconds !== 'number') throw new TypeError('sleep(seconds)');
}

export function fail(message) {
  throw new Error(message);
}

export function randomSeed() {}

export default { check, group, sleep, fail, randomSeed };
