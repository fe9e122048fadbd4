/** Draws chart primitives as SVG: inline in the self-contained HTML report, and as a file per chart. */
import { CHART_HEIGHT, CHART_WIDTH, glyphHeight, layout, type ChartSpec, type Prim } from './chart.js';

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const n = (v: number) => +v.toFixed(2);

function element(p: Prim): string {
  switch (p.t) {
    case 'rect':
      return `<rect x="${n(p.x)}" y="${n(p.y)}" width="${n(p.w)}" height="${n(p.h)}" fill="${p.fill}"/>`;
    case 'line':
      return `<line x1="${n(p.x1)}" y1="${n(p.y1)}" x2="${n(p.x2)}" y2="${n(p.y2)}" stroke="${p.stroke}" stroke-width="${p.width}"${p.dash ? ` stroke-dasharray="${p.dash} ${p.dash}"` : ''}/>`;
    case 'polyline':
      return `<polyline fill="none" points="${p.points.map(([x, y]) => `${n(x)},${n(y)}`).join(' ')}" stroke="${p.stroke}" stroke-width="${p.width}"${p.dash ? ` stroke-dasharray="${p.dash} ${p.dash}"` : ''}/>`;
    case 'circle':
      return `<circle cx="${n(p.x)}" cy="${n(p.y)}" r="${p.r}" fill="${p.fill}"/>`;
    case 'text': {
      // a monospace font at 10 units per size advances ~6 units per character, as chart.ts measures text
      const anchor = p.anchor === 'start' ? '' : ` text-anchor="${p.anchor}"`;
      return `<text x="${n(p.x)}" y="${n(p.y + glyphHeight * p.size)}" font-size="${10 * p.size}" fill="${p.fill}"${anchor}>${escapeXml(p.text)}</text>`;
    }
  }
}

export function chartSvg(spec: ChartSpec): string {
  const body = layout(spec).map(element).join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" role="img" aria-label="${escapeXml(spec.title)}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace">${body}</svg>`;
}
