/**
 * One run of `npm run bench`, as written to bench/results/<date>.json, and what is rendered from
 * it: the self-contained HTML report (inline SVG, inline CSS), an SVG file per chart, and a Markdown
 * summary for the README.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MachineFacts, ScenarioResult } from '../harness.js';
import { chartSvg, escapeXml } from './svg.js';

export interface RunDocument {
  /** YYYY-MM-DD */
  date: string;
  startedAt: string;
  finishedAt: string;
  command: string;
  mode: 'full' | 'smoke' | 'partial';
  machine: MachineFacts;
  notes: string[];
  scenarios: ScenarioResult[];
  failed: { scenario: string; error: string }[];
  skipped: { scenario: string; reason: string }[];
}

export interface Written { json: string; html: string; markdown: string; svgs: string[] }

/** Writes `<dir>/<stem>.json`, `.html`, `.md` and `<dir>/<stem>/<chart>.svg`. */
export function writeReport(doc: RunDocument, dir: string, stem: string): Written {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${stem}.json`);
  writeFileSync(json, `${JSON.stringify(doc, null, 2)}\n`);
  const html = join(dir, `${stem}.html`);
  writeFileSync(html, renderHtml(doc));
  const markdown = join(dir, `${stem}.md`);
  writeFileSync(markdown, renderMarkdown(doc));
  const svgs: string[] = [];
  const charts = doc.scenarios.flatMap((s) => s.charts);
  if (charts.length) {
    const chartDir = join(dir, stem);
    mkdirSync(chartDir, { recursive: true });
    for (const c of charts) {
      const file = join(chartDir, `${c.id}.svg`);
      writeFileSync(file, `${chartSvg(c)}\n`);
      svgs.push(file);
    }
  }
  return { json, html, markdown, svgs };
}

const h = escapeXml;

function sizeText(s: ScenarioResult): string {
  if (s.argv) return s.argv.length ? s.argv.join(' ') : 'its default sizes';
  return Object.entries(s.sizes).map(([k, v]) => `--${k} ${v.join(',')}`).join(' ');
}

function cell(v: string | number | boolean | null): string {
  return v === null ? '' : h(String(v));
}

function machineRows(m: MachineFacts): [string, string][] {
  return [
    ['CPU', `${m.cpuModel}, ${m.cores} cores`],
    ['memory', `${m.memoryMiB.toLocaleString('en-US')} MiB`],
    ['Node.js', m.node],
    ['kernel', `${m.platform} ${m.kernel} (${m.arch})`],
    ['load average (1, 5, 15 min) at start', m.loadAverageAtStart.join(' ')],
    ...(m.loadAverageAtEnd ? [['load average at end', m.loadAverageAtEnd.join(' ')] as [string, string]] : []),
  ];
}

export function renderHtml(doc: RunDocument): string {
  const parts: string[] = [];
  parts.push(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>orch-apiserver benchmarks ${h(doc.date)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.3rem;margin-top:2.5rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}h3{font-size:1.05rem}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.9rem}th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:right}th{background:#f6f6f6}
td:first-child,th:first-child{text-align:left}caption{caption-side:top;text-align:left;color:#555;font-size:.85rem;padding-bottom:.3rem}
.chart{max-width:100%;height:auto;border:1px solid #eee;margin:.5rem 0}.ok{color:#1a7f37}.no{color:#b00020}.note{color:#555;font-size:.9rem}
pre{background:#f6f6f6;padding:.6rem;overflow:auto;font-size:.8rem}code{font-size:.9em}ul.lines li{font-family:ui-monospace,monospace;font-size:.82rem}
</style></head><body>`);
  parts.push(`<h1>orch-apiserver benchmarks, ${h(doc.date)}</h1>`);
  parts.push(`<p class="note">${h(doc.mode)} run: <code>${h(doc.command)}</code>, ${h(doc.startedAt)} to ${h(doc.finishedAt)}.</p>`);
  parts.push('<table><caption>machine</caption>');
  for (const [k, v] of machineRows(doc.machine)) parts.push(`<tr><th>${h(k)}</th><td>${h(v)}</td></tr>`);
  parts.push('</table>');
  if (doc.notes.length) parts.push(`<ul>${doc.notes.map((n) => `<li>${h(n)}</li>`).join('')}</ul>`);
  if (doc.failed.length) parts.push(`<h2>Failed</h2><ul>${doc.failed.map((f) => `<li><b>${h(f.scenario)}</b>: <pre>${h(f.error)}</pre></li>`).join('')}</ul>`);
  if (doc.skipped.length) parts.push(`<p class="note">Skipped: ${doc.skipped.map((s) => `${h(s.scenario)} (${h(s.reason)})`).join('; ')}</p>`);

  parts.push('<h2>Contents</h2><ul>');
  for (const s of doc.scenarios) parts.push(`<li><a href="#${h(s.scenario)}">${h(s.scenario)}</a>: ${h(s.description)}</li>`);
  parts.push('</ul>');

  for (const s of doc.scenarios) {
    parts.push(`<h2 id="${h(s.scenario)}">${h(s.scenario)}</h2>`);
    parts.push(`<p>${h(s.description)}</p>`);
    parts.push(`<p class="note">sizes: ${h(sizeText(s))}; took ${h(String(s.seconds))} s</p>`);
    if (s.lines.length) parts.push(`<ul class="lines">${s.lines.map((l) => `<li>${h(l)}</li>`).join('')}</ul>`);
    if (s.budget.length) {
      parts.push('<table><caption>DESIGN.md performance budget (a scale to read against, not asserted)</caption><tr><th>what</th><th>target</th><th>measured</th><th>within</th></tr>');
      for (const b of s.budget) parts.push(`<tr><td>${h(b.what)}</td><td>${h(b.target)}</td><td>${h(b.measured)}</td><td class="${b.within ? 'ok' : b.within === false ? 'no' : ''}">${b.within === null ? '' : b.within ? 'yes' : 'no'}</td></tr>`);
      parts.push('</table>');
    }
    if (s.ratios.length) {
      parts.push('<table><caption>ratio to the baseline measured in the same run</caption><tr><th>figure</th><th>ours</th><th>baseline</th><th>ours / baseline</th><th>better when</th></tr>');
      for (const r of s.ratios) parts.push(`<tr><td>${h(r.name)}</td><td>${Number.isFinite(r.ours) ? h(String(r.ours)) : ''}</td><td>${Number.isFinite(r.baseline) ? h(String(r.baseline)) : ''}</td><td>${h(String(r.value))}</td><td>${h(r.better ?? '')}</td></tr>`);
      parts.push('</table>');
    }
    for (const t of s.tables) {
      parts.push(`<table><caption>${h(t.title)}</caption><tr>${t.columns.map((c) => `<th>${h(c)}</th>`).join('')}</tr>`);
      for (const row of t.rows) parts.push(`<tr>${row.map((v) => `<td>${cell(v)}</td>`).join('')}</tr>`);
      parts.push('</table>');
    }
    for (const c of s.charts) parts.push(`<figure><div class="chart">${chartSvg(c)}</div><figcaption class="note">${h(c.id)}.svg</figcaption></figure>`);
    parts.push(`<details><summary>all figures (JSON)</summary><pre>${h(JSON.stringify(s.figures, null, 2))}</pre></details>`);
  }
  parts.push('</body></html>\n');
  return parts.join('\n');
}

function mdEscape(v: string | number | boolean | null): string {
  return v === null ? '' : String(v).replace(/\|/g, '\\|');
}

export function renderMarkdown(doc: RunDocument): string {
  const out: string[] = [];
  const m = doc.machine;
  out.push(`Run of ${doc.date} (\`${doc.command}\`, ${doc.mode}) on ${m.cpuModel}, ${m.cores} cores, ${m.memoryMiB.toLocaleString('en-US')} MiB, Node.js ${m.node}, ${m.platform} ${m.kernel}; load average ${m.loadAverageAtStart[0]} at start${m.loadAverageAtEnd ? `, ${m.loadAverageAtEnd[0]} at end` : ''}.`);
  for (const n of doc.notes) out.push(`- ${n}`);
  out.push('');
  for (const s of doc.scenarios) {
    out.push(`**${s.scenario}** (${sizeText(s)}; ${s.seconds} s)`);
    out.push('');
    for (const t of s.tables) {
      out.push(`_${t.title}_`);
      out.push('');
      out.push(`| ${t.columns.map(mdEscape).join(' | ')} |`);
      out.push(`|${t.columns.map(() => '---').join('|')}|`);
      for (const row of t.rows) out.push(`| ${row.map(mdEscape).join(' | ')} |`);
      out.push('');
    }
    if (s.budget.length) {
      out.push('| budget line | target | measured | within |');
      out.push('|---|---|---|---|');
      for (const b of s.budget) out.push(`| ${mdEscape(b.what)} | ${mdEscape(b.target)} | ${mdEscape(b.measured)} | ${b.within === null ? '' : b.within ? 'yes' : 'no'} |`);
      out.push('');
    }
  }
  if (doc.failed.length) out.push(`Failed: ${doc.failed.map((f) => f.scenario).join(', ')}`);
  if (doc.skipped.length) out.push(`Skipped: ${doc.skipped.map((s) => `${s.scenario} (${s.reason})`).join('; ')}`);
  return `${out.join('\n')}\n`;
}
