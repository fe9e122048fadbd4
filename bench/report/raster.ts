/**
 * A tiny rasterizer for chart primitives: filled rectangles, thick (optionally dashed) lines and
 * polylines, filled circles, and text in the 5x7 bitmap font; no anti-aliasing. Draws at `scale`
 * pixels per logical unit and returns a PNG.
 */
import { CHART_HEIGHT, CHART_WIDTH, layout, textWidth, type ChartSpec, type Prim } from './chart.js';
import { glyphHeight, glyphWidth, advance, pixel } from './font.js';
import { encodePng } from './png.js';

type RGB = [number, number, number];

function parseColor(c: string): RGB {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(c);
  if (!m) throw new Error(`unsupported color ${c}`);
  return [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)];
}

export class Raster {
  readonly rgb: Uint8Array;

  constructor(readonly width: number, readonly height: number, readonly scale: number) {
    this.rgb = new Uint8Array(width * height * 3).fill(255);
  }

  /** Fills device pixels [x0, x1) x [y0, y1). */
  private fill(x0: number, y0: number, x1: number, y1: number, c: RGB): void {
    const xa = Math.max(0, Math.round(x0));
    const ya = Math.max(0, Math.round(y0));
    const xb = Math.min(this.width, Math.round(x1));
    const yb = Math.min(this.height, Math.round(y1));
    for (let y = ya; y < yb; y++) {
      let i = (y * this.width + xa) * 3;
      for (let x = xa; x < xb; x++, i += 3) { this.rgb[i] = c[0]; this.rgb[i + 1] = c[1]; this.rgb[i + 2] = c[2]; }
    }
  }

  rect(x: number, y: number, w: number, h: number, color: string): void {
    const s = this.scale;
    this.fill(x * s, y * s, (x + w) * s, (y + h) * s, parseColor(color));
  }

  /** A line of `width` logical units; `dash` on/off lengths in logical units; returns the dash phase reached. */
  line(x1: number, y1: number, x2: number, y2: number, color: string, width: number, dash?: number, phase = 0): number {
    const s = this.scale;
    const c = parseColor(color);
    const [ax, ay, bx, by] = [x1 * s, y1 * s, x2 * s, y2 * s];
    const len = Math.hypot(bx - ax, by - ay);
    const half = Math.max(0.5, (width * s) / 2);
    const period = dash ? dash * s * 2 : 0;
    const steps = Math.max(1, Math.ceil(len * 2));
    for (let k = 0; k <= steps; k++) {
      const d = (k / steps) * len;
      if (period && (phase + d) % period >= period / 2) continue;
      const x = ax + ((bx - ax) * k) / steps;
      const y = ay + ((by - ay) * k) / steps;
      this.fill(x - half, y - half, x + half, y + half, c);
    }
    return phase + len;
  }

  circle(cx: number, cy: number, r: number, color: string): void {
    const s = this.scale;
    const c = parseColor(color);
    const R = r * s;
    for (let dy = -Math.ceil(R); dy <= Math.ceil(R); dy++) {
      const half = Math.sqrt(Math.max(0, R * R - dy * dy));
      this.fill(cx * s - half, cy * s + dy, cx * s + half, cy * s + dy + 1, c);
    }
  }

  text(x: number, y: number, text: string, size: number, color: string, anchor: 'start' | 'middle' | 'end'): void {
    const s = this.scale;
    const c = parseColor(color);
    const w = textWidth(text, size);
    let left = anchor === 'start' ? x : anchor === 'middle' ? x - w / 2 : x - w;
    const px = size * s;
    for (const ch of text) {
      for (let col = 0; col < glyphWidth; col++) {
        for (let row = 0; row < glyphHeight; row++) {
          if (pixel(ch, col, row)) {
            const gx = Math.round(left * s) + col * px;
            const gy = Math.round(y * s) + row * px;
            this.fill(gx, gy, gx + px, gy + px, c);
          }
        }
      }
      left += advance * size;
    }
  }

  draw(p: Prim): void {
    switch (p.t) {
      case 'rect': this.rect(p.x, p.y, p.w, p.h, p.fill); break;
      case 'line': this.line(p.x1, p.y1, p.x2, p.y2, p.stroke, p.width, p.dash); break;
      case 'polyline': {
        let phase = 0;
        for (let i = 1; i < p.points.length; i++) {
          const [a, b] = [p.points[i - 1], p.points[i]];
          phase = this.line(a[0], a[1], b[0], b[1], p.stroke, p.width, p.dash, phase);
        }
        break;
      }
      case 'circle': this.circle(p.x, p.y, p.r, p.fill); break;
      case 'text': this.text(p.x, p.y, p.text, p.size, p.fill, p.anchor); break;
    }
  }

  png(): Buffer {
    return encodePng(this.width, this.height, this.rgb);
  }
}

/** The chart as a PNG, `scale` device pixels per logical unit. */
export function chartPng(spec: ChartSpec, scale = 2): Buffer {
  const r = new Raster(CHART_WIDTH * scale, CHART_HEIGHT * scale, scale);
  for (const p of layout(spec)) r.draw(p);
  return r.png();
}
