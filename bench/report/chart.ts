/**
 * Charts for the report: a scenario describes a chart as data (ChartSpec, kept in the results
 * JSON), `layout` turns it into drawing primitives once, and two backends draw the same
 * primitives as SVG (svg.ts), inline in the HTML report and as one .svg file per chart.
 *
 * Coordinates are logical units on a CHART_WIDTH x CHART_HEIGHT canvas. Text is measured as a
 * monospace font draws it: `size` s gives glyphs about 5s x 7s with an advance of 6s.
 */

/** a glyph's advance and height at size 1, in logical units */
export const advance = 6;
export const glyphHeight = 7;

export interface Series {
  name: string;
  values: (number | null)[];
  color?: string;
  dashed?: boolean;
}

export interface ChartSpec {
  /** file-name-safe id, unique in a report: the chart file is `<id>.svg` */
  id: string;
  title: string;
  kind: 'bar' | 'line';
  xLabel: string;
  yLabel: string;
  categories: string[];
  series: Series[];
  /** horizontal reference lines, e.g. a budget target */
  refLines?: { value: number; label: string }[];
}

export type Prim =
  | { t: 'rect'; x: number; y: number; w: number; h: number; fill: string }
  | { t: 'line'; x1: number; y1: number; x2: number; y2: number; stroke: string; width: number; dash?: number }
  | { t: 'polyline'; points: [number, number][]; stroke: string; width: number; dash?: number }
  | { t: 'circle'; x: number; y: number; r: number; fill: string }
  /** y is the top of the glyph box */
  | { t: 'text'; x: number; y: number; text: string; size: number; fill: string; anchor: 'start' | 'middle' | 'end' };

export const CHART_WIDTH = 800;
export const CHART_HEIGHT = 440;

const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const ink = '#222222';
const grid = '#e3e3e3';
const axis = '#555555';

export function textWidth(text: string, size: number): number {
  return text.length * advance * size - size;
}

/** Tick values from 0 to a round maximum at or above `max`, about five of them. */
export function niceTicks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / 5;
  const mag = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= rough) ?? 10 * mag;
  const ticks: number[] = [];
  for (let v = 0; v < max + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  if (ticks[ticks.length - 1] < max) ticks.push(+(ticks[ticks.length - 1] + step).toPrecision(12));
  return ticks;
}

/** 1.5k, 12k, 2.3M, 0.25, 7 */
export function compact(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  if (a >= 1000) return `${+(v / 1e3).toPrecision(2)}k`;
  if (a >= 100 || a === 0) return String(Math.round(v));
  return String(+v.toPrecision(2));
}

export function layout(spec: ChartSpec): Prim[] {
  const W = CHART_WIDTH;
  const H = CHART_HEIGHT;
  const out: Prim[] = [{ t: 'rect', x: 0, y: 0, w: W, h: H, fill: '#ffffff' }];
  const colorOf = (i: number) => spec.series[i].color ?? palette[i % palette.length];

  // title
  const titleSize = textWidth(spec.title, 2) <= W - 24 ? 2 : 1;
  const maxChars = Math.floor((W - 24) / (advance * titleSize));
  const title = spec.title.length > maxChars ? `${spec.title.slice(0, maxChars - 3)}...` : spec.title;
  out.push({ t: 'text', x: W / 2, y: titleSize === 2 ? 10 : 14, text: title, size: titleSize, fill: ink, anchor: 'middle' });

  // legend, wrapped into rows under the title
  let lx = 16;
  let ly = 36;
  for (let i = 0; i < spec.series.length; i++) {
    const s = spec.series[i];
    const w = 22 + textWidth(s.name, 1) + 16;
    if (lx + w > W - 16) { lx = 16; ly += 14; }
    if (spec.kind === 'bar') out.push({ t: 'rect', x: lx, y: ly, w: 14, h: 8, fill: colorOf(i) });
    else out.push({ t: 'line', x1: lx, y1: ly + 4, x2: lx + 16, y2: ly + 4, stroke: colorOf(i), width: 2, dash: s.dashed ? 4 : undefined });
    out.push({ t: 'text', x: lx + 22, y: ly + 1, text: s.name, size: 1, fill: ink, anchor: 'start' });
    lx += w;
  }

  // scale
  const values = spec.series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v)));
  const refs = spec.refLines ?? [];
  const max = Math.max(0, ...values, ...refs.map((r) => r.value));
  const ticks = niceTicks(max);
  const top = ticks[ticks.length - 1] || 1;
  const tickLabels = ticks.map(compact);
  const left = 20 + Math.max(...tickLabels.map((t) => textWidth(t, 1)));
  const plot = { x: left, y: ly + 40, w: W - left - 24, h: 0 };
  plot.h = H - plot.y - 44;
  const yOf = (v: number) => plot.y + plot.h - (v / top) * plot.h;

  // y label above the axis, grid and tick labels
  out.push({ t: 'text', x: 8, y: plot.y - 18, text: spec.yLabel, size: 1, fill: axis, anchor: 'start' });
  ticks.forEach((v, i) => {
    const y = Math.round(yOf(v));
    out.push({ t: 'line', x1: plot.x, y1: y, x2: plot.x + plot.w, y2: y, stroke: grid, width: 1 });
    out.push({ t: 'text', x: plot.x - 6, y: y - (glyphHeight - 1) / 2, text: tickLabels[i], size: 1, fill: axis, anchor: 'end' });
  });

  // categories
  const n = Math.max(1, spec.categories.length);
  const slot = plot.w / n;
  const centerOf = (i: number) => plot.x + slot * (i + 0.5);
  spec.categories.forEach((c, i) => {
    const label = textWidth(c, 1) > slot - 4 ? c.slice(0, Math.max(1, Math.floor((slot - 4) / advance))) : c;
    out.push({ t: 'text', x: centerOf(i), y: plot.y + plot.h + 8, text: label, size: 1, fill: ink, anchor: 'middle' });
  });
  out.push({ t: 'text', x: plot.x + plot.w / 2, y: H - 16, text: spec.xLabel, size: 1, fill: axis, anchor: 'middle' });

  if (spec.kind === 'bar') {
    const k = Math.max(1, spec.series.length);
    const group = slot * 0.8;
    const bar = group / k;
    const showValues = spec.series.every((s) => s.values.every((v) => v === null || textWidth(compact(v), 1) <= bar + 2));
    spec.series.forEach((s, si) => {
      s.values.forEach((v, ci) => {
        if (v === null || !Number.isFinite(v)) return;
        const x = centerOf(ci) - group / 2 + si * bar;
        const y = yOf(v);
        out.push({ t: 'rect', x: x + 1, y, w: Math.max(1, bar - 2), h: plot.y + plot.h - y, fill: colorOf(si) });
        if (showValues) out.push({ t: 'text', x: x + bar / 2, y: y - 10, text: compact(v), size: 1, fill: ink, anchor: 'middle' });
      });
    });
  } else {
    spec.series.forEach((s, si) => {
      const points: [number, number][] = [];
      s.values.forEach((v, ci) => { if (v !== null && Number.isFinite(v)) points.push([centerOf(ci), yOf(v)]); });
      if (points.length > 1) out.push({ t: 'polyline', points, stroke: colorOf(si), width: 2, dash: s.dashed ? 6 : undefined });
      for (const [x, y] of points) out.push({ t: 'circle', x, y, r: 3, fill: colorOf(si) });
    });
  }

  for (const r of refs) {
    const y = yOf(r.value);
    out.push({ t: 'line', x1: plot.x, y1: y, x2: plot.x + plot.w, y2: y, stroke: '#b00020', width: 1, dash: 5 });
    out.push({ t: 'text', x: plot.x + plot.w, y: y - 11, text: r.label, size: 1, fill: '#b00020', anchor: 'end' });
  }

  // axes last, over the bars
  out.push({ t: 'line', x1: plot.x, y1: plot.y, x2: plot.x, y2: plot.y + plot.h, stroke: axis, width: 1 });
  out.push({ t: 'line', x1: plot.x, y1: plot.y + plot.h, x2: plot.x + plot.w, y2: plot.y + plot.h, stroke: axis, width: 1 });
  return out;
}
