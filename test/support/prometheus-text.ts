/**
 * A strict parser of Prometheus' text exposition format 0.0.4, for tests: every line must be a
 * HELP, a TYPE or a sample of the family announced just before it; names and label names must be
 * valid, label values correctly escaped, values numbers; a family appears once; histograms have
 * cumulative buckets ending in +Inf equal to their _count, and a _sum. It throws on anything else.
 */

export interface Sample { name: string; labels: Record<string, string>; value: number }
export interface Family { name: string; help: string; type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'; samples: Sample[] }

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const types = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Go's strconv.ParseFloat, which Prometheus uses: NaN and Inf in any case (prom-client writes "Nan") */
function parseValue(text: string, line: string): number {
  const special = text.toLowerCase();
  if (special === '+inf' || special === 'inf' || special === '+infinity' || special === 'infinity') return Infinity;
  if (special === '-inf' || special === '-infinity') return -Infinity;
  if (special === 'nan') return NaN;
  if (!/^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)$/.test(text)) throw new Error(`bad value ${JSON.stringify(text)} in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq);
    if (!labelName.test(name)) throw new Error(`bad label name ${JSON.stringify(name)} in: ${line}`);
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n'; else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape \\${next} in: ${line}`);
      } else {
        value += text[j];
      }
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (i < text.length) throw new Error(`expected , between labels in: ${line}`);
  }
  return labels;
}

function belongs(sample: string, family: Family): boolean {
  if (sample === family.name) return family.type !== 'histogram';
  if (family.type === 'histogram') return [`${family.name}_bucket`, `${family.name}_sum`, `${family.name}_count`].includes(sample);
  if (family.type === 'summary') return [`${family.name}_sum`, `${family.name}_count`].includes(sample);
  return false;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    if (!series.has(key)) series.set(key, []);
    (series.get(key) as Sample[]).push(s);
    if (s.name.endsWith('_bucket') && le === undefined) throw new Error(`${family.name}: bucket without le`);
  }
  for (const [key, samples] of series) {
    const buckets = samples.filter((s) => s.name.endsWith('_bucket'));
    const count = samples.find((s) => s.name.endsWith('_count'));
    if (!count || !samples.some((s) => s.name.endsWith('_sum'))) throw new Error(`${family.name}${key}: no _sum or _count`);
    let previous = -Infinity;
    let last = 0;
    for (const b of buckets) {
      const le = parseValue(b.labels.le, b.labels.le);
      if (le <= previous) throw new Error(`${family.name}: buckets out of order`);
      if (b.value < last) throw new Error(`${family.name}: buckets not cumulative`);
      previous = le;
      last = b.value;
    }
    if (previous !== Infinity || last !== count.value) throw new Error(`${family.name}${key}: +Inf bucket ${last} is not _count ${count.value}`);
  }
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, Family>();
  let current: Family | undefined;
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const help = /^# HELP (\S+) (.*)$/.exec(line);
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (help) {
      if (!metricName.test(help[1])) throw new Error(`bad metric name in: ${line}`);
      if (families.has(help[1])) throw new Error(`family ${help[1]} appears twice`);
      current = { name: help[1], help: help[2].replace(/\\n/g, '\n').replace(/\\\\/g, '\\'), type: 'untyped', samples: [] };
      families.set(current.name, current);
    } else if (type) {
      if (!current || current.name !== type[1] || current.samples.length > 0) throw new Error(`TYPE not right after its HELP: ${line}`);
      if (!types.has(type[2])) throw new Error(`unknown type in: ${line}`);
      current.type = type[2] as Family['type'];
    } else if (line.startsWith('#')) {
      throw new Error(`unexpected comment: ${line}`);
    } else {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
      if (!m) throw new Error(`bad sample line: ${line}`);
      if (!current || !belongs(m[1], current)) throw new Error(`sample ${m[1]} outside its family: ${line}`);
      current.samples.push({ name: m[1], labels: m[2] ? parseLabels(m[2], line) : {}, value: parseValue(m[3], line) });
    }
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** The value of the one sample of `name` whose labels include `labels` (throws unless exactly one). */
export function sampleValue(families: Map<string, Family>, family: string, name: string, labels: Record<string, string>): number {
  const f = families.get(family);
  if (!f) throw new Error(`no family ${family}`);
  const found = f.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} with ${JSON.stringify(labels)}`);
  return found[0].value;
}
