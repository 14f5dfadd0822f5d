/**
 * What the benchmarks (bench/cpu.ts in Node, the browser benches' Node sides and pages) share
 * and that needs no Node module: `--variant`'s parser, statistics of the timed runs, number
 * formats, the Markdown table, and the SVG bar chart written as a plain string.
 */

/** `--variant FLAG=VALUE` of bench:webgl and bench:webgpu: ours timed again with a tfjs flag set (an A/B in one run). */
export interface TuningVariant {
  flag: string;
  value: number | boolean;
}

/** Parses `--variant`'s FLAG=VALUE (VALUE a number, true or false). */
export function parseVariant(text: string | undefined): TuningVariant {
  const match = /^(\w+)=(.+)$/.exec(text ?? '');
  if (match === null) throw new Error(`--variant takes FLAG=VALUE (a tfjs flag), got '${text}'`);
  const value = match[2] === 'true' ? true : match[2] === 'false' ? false : Number(match[2]);
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`--variant: '${match[2]}' is not a number or boolean`);
  return {flag: match[1], value};
}

export interface Timing {
  /** Milliseconds per call: median, fastest and slowest of the timed runs. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

export function summarize(times: readonly number[]): Timing {
  if (times.length === 0) throw new Error('no timed runs');
  const sorted = [...times].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return {median, min: sorted[0], max: sorted[sorted.length - 1], runs: sorted.length};
}

/**
 * How many times slower `slow` ran than `fast`, paired: the median over rounds of slow[r] ÷
 * fast[r] (the rounds both have); NaN with none. Two implementations timed side by side in every
 * round see a load that changes over seconds alike, and the median is robust to a disturbed round.
 */
export function pairedMedianRatio(slow: readonly number[], fast: readonly number[]): number {
  const ratios = fast.slice(0, slow.length).map((t, i) => slow[i] / t);
  return ratios.length === 0 ? NaN : summarize(ratios).median;
}

/** GFLOP/s of `flops` done in `milliseconds`. */
export const gflops = (flops: number, milliseconds: number) => flops / milliseconds / 1e6;

/** Milliseconds with 3 significant figures (at least 0 decimals). */
export function ms(v: number): string {
  if (!Number.isFinite(v)) return '–';
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v.toFixed(3);
}

/** A rate with 3 significant figures (small rates keep their leading digits). */
export function rate(v: number): string {
  if (!Number.isFinite(v)) return '–';
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  if (v >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}

/** "median (min–max)" of a timing, as GFLOP/s: the fastest run is the max rate. */
export function rateRange(flops: number, t: Timing): string {
  return `${rate(gflops(flops, t.median))} (${rate(gflops(flops, t.max))}–${rate(gflops(flops, t.min))})`;
}

/** A ratio: `12×`, `0.31×`, `1,830×`. */
export function ratio(v: number): string {
  if (!Number.isFinite(v) || v <= 0) return '–';
  if (v >= 1000) return `${Math.round(v).toLocaleString('en-US')}×`;
  if (v >= 10) return `${v.toFixed(0)}×`;
  if (v >= 1) return `${v.toFixed(1)}×`;
  return `${v.toPrecision(2)}×`;
}

/** Bytes as KiB/MiB/GiB with 3 significant figures; negative values keep their sign. */
export function bytes(v: number): string {
  if (!Number.isFinite(v)) return '–';
  const sign = v < 0 ? '−' : '';
  let a = Math.abs(v);
  if (a < 1024) return `${sign}${a.toFixed(0)} B`;
  for (const unit of ['KiB', 'MiB', 'GiB']) {
    a /= 1024;
    if (a < 1024 || unit === 'GiB') return `${sign}${a >= 100 ? a.toFixed(0) : a >= 10 ? a.toFixed(1) : a.toFixed(2)} ${unit}`;
  }
  return `${sign}${a}`;
}

/** A Markdown table; `right[c]` right-aligns column c. Cells are padded so the text reads as a table too. */
export function markdownTable(header: readonly string[], rows: readonly string[][], right: readonly boolean[] = []): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const widths = header.map((h, c) => Math.max(3, h.length, ...rows.map(r => cell(r[c] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${
      cells.map((text, c) => right[c] ? cell(text).padStart(widths[c]) : cell(text).padEnd(widths[c])).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => right[c] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2)).join('|')}|`;
  return [line(header), rule, ...rows.map(r => line(header.map((_, c) => r[c] ?? '')))].join('\n');
}

export interface ChartSeries {
  readonly name: string;
  readonly color: string;
}

export interface ChartGroup {
  readonly label: string;
  /** One value per series, in the order of `series`; NaN or ≤ 0 leaves the bar out (see BarChart.missing). */
  readonly values: readonly number[];
}

export interface BarChart {
  readonly title: string;
  readonly subtitle?: string;
  /** The axis label, e.g. "GFLOP/s (log scale)". */
  readonly unit: string;
  readonly series: readonly ChartSeries[];
  readonly groups: readonly ChartGroup[];
  /** Text in the slot of a missing bar (e.g. "no tfjs kernel"); without it, missing bars take no space. */
  readonly missing?: string;
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A horizontal grouped bar chart on a log10 axis, as an SVG document: one group of bars per
 * workload, one bar per series, each bar labelled with its value. No dependency: plain strings.
 */
export function barChartSvg(chart: BarChart): string {
  const positive = chart.groups.flatMap(g => g.values).filter(v => Number.isFinite(v) && v > 0);
  const lo = Math.floor(Math.log10(Math.min(...positive, 1)));
  // The axis ends a little past the largest value (room for its label), not at the next decade.
  const hi = Math.log10(Math.max(...positive, 1)) + 0.12;
  const labelWidth = 14 + 6.6 * Math.max(...chart.groups.map(g => g.label.length), 10);
  const plotWidth = 640;
  const left = labelWidth;
  const barHeight = 11;
  const barGap = 2;
  const groupGap = 12;
  // The subtitle wraps at about the plot's width (6 px a character).
  const subtitleLines = wrap(chart.subtitle ?? '', Math.floor((plotWidth + 60) / 6));
  const top = 46 + 16 * subtitleLines.length;
  // Legend entries laid out left to right, wrapping within the plot's width.
  const legend: Array<{series: ChartSeries; dx: number; row: number}> = [];
  let legendX = 0;
  let legendRow = 0;
  for (const series of chart.series) {
    const entryWidth = 17 + 6.2 * series.name.length + 24;
    if (legendX > 0 && legendX + entryWidth > plotWidth + 60) {
      legendRow++;
      legendX = 0;
    }
    legend.push({series, dx: legendX, row: legendRow});
    legendX += entryWidth;
  }
  const legendHeight = 18 * (legendRow + 1) + 8;
  const present = (v: number) => Number.isFinite(v) && v > 0;
  const slots = (g: ChartGroup) => chart.series.filter((_, s) => chart.missing !== undefined || present(g.values[s])).length;
  const groupTops: number[] = [];
  let plotHeight = 0;
  for (const g of chart.groups) {
    groupTops.push(plotHeight);
    plotHeight += Math.max(1, slots(g)) * (barHeight + barGap) + groupGap;
  }
  const width = left + plotWidth + 70;
  const height = top + plotHeight + 34 + legendHeight;
  const x = (v: number) => left + (Math.log10(v) - lo) / (hi - lo) * plotWidth;

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width.toFixed(0)}" height="${height.toFixed(0)}" viewBox="0 0 ${
      width.toFixed(0)} ${height.toFixed(0)}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  out.push(`<text x="${left}" y="20" font-size="14" font-weight="bold">${escapeXml(chart.title)}</text>`);
  subtitleLines.forEach((line, i) => out.push(`<text x="${left}" y="${38 + 16 * i}" fill="#555">${escapeXml(line)}</text>`));
  // Decade grid lines with labels, and 2/5 minor lines.
  for (let e = lo; e <= Math.floor(hi); e++) {
    const gx = x(10 ** e);
    out.push(`<line x1="${gx.toFixed(1)}" y1="${top - 4}" x2="${gx.toFixed(1)}" y2="${top + plotHeight}" stroke="#bbb"/>`);
    const label = e >= 0 ? `${10 ** e}` : `${(10 ** e).toFixed(-e)}`;
    out.push(`<text x="${gx.toFixed(1)}" y="${top + plotHeight + 14}" text-anchor="middle" fill="#333">${label}</text>`);
    for (const m of [2, 5]) {
      if (Math.log10(m * 10 ** e) <= hi) {
        const mx = x(m * 10 ** e);
        out.push(`<line x1="${mx.toFixed(1)}" y1="${top - 4}" x2="${mx.toFixed(1)}" y2="${top + plotHeight}" stroke="#eee"/>`);
      }
    }
  }
  out.push(`<text x="${(left + plotWidth / 2).toFixed(0)}" y="${top + plotHeight + 28}" text-anchor="middle" fill="#333">${
      escapeXml(chart.unit)}</text>`);
  chart.groups.forEach((group, g) => {
    const gy = top + groupTops[g];
    const mid = gy + (Math.max(1, slots(group)) * (barHeight + barGap)) / 2;
    out.push(`<text x="${left - 6}" y="${(mid + 2).toFixed(1)}" text-anchor="end">${escapeXml(group.label)}</text>`);
    let slot = 0;
    chart.series.forEach((series, s) => {
      const value = group.values[s];
      if (!present(value) && chart.missing === undefined) return;
      const by = gy + (slot++) * (barHeight + barGap);
      if (!present(value)) {
        out.push(`<text x="${left + 3}" y="${by + barHeight - 2}" fill="#999" font-size="9">${escapeXml(series.name)}: ${
            escapeXml(chart.missing!)}</text>`);
        return;
      }
      const w = Math.max(1, x(value) - left);
      out.push(`<rect x="${left}" y="${by}" width="${w.toFixed(1)}" height="${barHeight}" fill="${series.color}"><title>${
          escapeXml(`${group.label} — ${series.name}: ${rate(value)}`)}</title></rect>`);
      out.push(`<text x="${(left + w + 3).toFixed(1)}" y="${by + barHeight - 2}" font-size="9" fill="#333">${rate(value)}</text>`);
    });
  });
  const ly = top + plotHeight + 44;
  legend.forEach(({series, dx, row}) => {
    const lx = left + dx;
    const y = ly + row * 18;
    out.push(`<rect x="${lx}" y="${y}" width="12" height="12" fill="${series.color}"/>`);
    out.push(`<text x="${lx + 17}" y="${y + 10}">${escapeXml(series.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** Splits text at spaces into lines of at most `width` characters (a longer word stays whole). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter(w => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Colours of the implementations, the same in every chart. */
export const COLORS = {
  simd: '#1f77b4',
  typescript: '#6baed6',
  composite: '#2ca02c',
  pytorch: '#ff7f0e',
  builtIn: '#d62728',
  webgl: '#9467bd',
} as const;
