/**
 * Reads oneDNN benchdnn convolution / deconvolution shape lists (the `workloads/` folder beside
 * DESIGN.md) into typed problems, and turns a problem into the arguments of our ops.
 *
 * Grammar (workloads/README.md):
 *   gG mbN icC idD ihH iwW ocO odD ohH owW kdK khK kwK sdS shS swS pdP phP pwP ddQ dhQ dwQ nNAME
 * `_` may separate fields, the name may end in `*N` (a repeat count), `#` starts a comment.
 * `p*` is the begin pad; the end pad is derived so the sizes agree (clamped at 0). `d*` is
 * oneDNN's dilation (0 = none); the graph/tfjs dilation is q + 1.
 */
import * as fs from 'fs';
import * as path from 'path';

import type {ConvolutionBackpropFiltersAttrs, ConvTransposeBackpropFiltersAttrs} from '../src/attributes';

export type ProblemKind = 'conv' | 'deconv';

/** One descriptor line, fully resolved. Spatial lists are outermost first (D, H, W). */
export interface Problem {
  /** The n"…" name without its repeat count; `<file>:<line>` when the line has none. */
  readonly name: string;
  /** The `*N` repeat count of the name (how often the network uses this layer); 1 when absent. */
  readonly repeat: number;
  /** The file relative to the workloads folder, e.g. `conv/shapes_resnet_50`. */
  readonly source: string;
  readonly line: number;
  /** The descriptor text as written (comment stripped). */
  readonly descriptor: string;
  readonly kind: ProblemKind;
  /** The batch of the file (`mb`, 2 by default); runs usually override it. */
  readonly batch: number;
  readonly groups: number;
  /** Channels of the (transposed) convolution's input and output. */
  readonly ic: number;
  readonly oc: number;
  readonly spatialRank: 1 | 2 | 3;
  /** Spatial sizes of the (transposed) convolution's input (`i*`) and output (`o*`). */
  readonly inputSize: readonly number[];
  readonly outputSize: readonly number[];
  readonly kernel: readonly number[];
  readonly strides: readonly number[];
  readonly padsBegin: readonly number[];
  readonly padsEnd: readonly number[];
  /** In the graph/tfjs convention: 1 = no dilation (oneDNN's `d*` + 1). */
  readonly dilations: readonly number[];
  /**
   * Deconv only: where the derived end pad came out negative, the transposed convolution's
   * output is that much longer than the pads alone give; this carries the difference (zeros
   * for conv, where the floor of the size formula absorbs it).
   */
  readonly outputPadding: readonly number[];
}

const AXES = ['d', 'h', 'w'] as const;
type Axis = typeof AXES[number];
type AxisField = 'i' | 'o' | 'k' | 's' | 'p' | 'd';
type AxisFields = Partial<Record<AxisField, number>>;

const FIELD_PATTERN = /^(mb|g|ic|oc|[iokspd][dhw])(-?\d+)/;
const NAME_PATTERN = /^n(?:"([^"]*)"|(\S+))/;

/** Where the workload files are: $CONV_WORKLOADS_DIR, else ../shared/workloads from the repository root. */
export function workloadsDir(): string {
  const override = process.env.CONV_WORKLOADS_DIR;
  const dir = override !== undefined && override !== '' ? path.resolve(override) :
                                                          path.resolve(repositoryRoot(), '..', 'shared', 'workloads');
  const ok = fs.existsSync(dir) && fs.statSync(dir).isDirectory() &&
      ['conv', 'deconv'].some(kind => fs.existsSync(path.join(dir, kind)));
  if (!ok) {
    throw new Error(
        `workloads folder not found: ${dir} (expected conv/ and deconv/ benchdnn shape lists there; ` +
        (override ? 'CONV_WORKLOADS_DIR points elsewhere' :
                    'it is ../shared/workloads relative to the repository root; set CONV_WORKLOADS_DIR to override') +
        ')');
  }
  return dir;
}

/** The folder holding this package's package.json, found upward from this file (not from the cwd). */
function repositoryRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(__dirname, '..');
    dir = parent;
  }
}

/** Every shape file, as paths relative to the workloads folder: `conv/shapes_…`, `deconv/shapes_…`. */
export function listWorkloadFiles(dir = workloadsDir()): string[] {
  const files: string[] = [];
  for (const kind of ['conv', 'deconv']) {
    const sub = path.join(dir, kind);
    if (!fs.existsSync(sub)) continue;
    for (const name of fs.readdirSync(sub).sort()) {
      if (name.startsWith('shapes_')) files.push(`${kind}/${name}`);
    }
  }
  return files;
}

/** Parses one file; `file` is relative to the workloads folder, its first folder gives the kind. */
export function loadWorkloadFile(file: string, dir = workloadsDir()): Problem[] {
  const kind = file.split(/[\\/]/)[0];
  if (kind !== 'conv' && kind !== 'deconv') {
    throw new Error(`workload file ${file}: must be under conv/ or deconv/`);
  }
  const full = path.join(dir, file);
  if (!fs.existsSync(full)) throw new Error(`workload file not found: ${full}`);
  return parseWorkloadText(fs.readFileSync(full, 'utf8'), kind, file);
}

/** Parses every file of the workloads folder. */
export function loadAllWorkloads(dir = workloadsDir()): Problem[] {
  return listWorkloadFiles(dir).flatMap(file => loadWorkloadFile(file, dir));
}

/** Parses the text of a shape list (one descriptor per line, `#` comments, blank lines). */
export function parseWorkloadText(text: string, kind: ProblemKind, source: string): Problem[] {
  const problems: Problem[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const descriptor = stripComment(raw).trim();
    if (descriptor === '') return;
    problems.push(parseDescriptor(descriptor, kind, source, index + 1));
  });
  return problems;
}

function stripComment(line: string): string {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '"') quoted = !quoted;
    else if (line[i] === '#' && !quoted) return line.slice(0, i);
  }
  return line;
}

/** Parses one descriptor; `source` and `line` only label errors and the result. */
export function parseDescriptor(descriptor: string, kind: ProblemKind, source = '<string>', line = 0): Problem {
  const where = `${source}:${line}: '${descriptor}'`;
  const fail = (message: string): never => {
    throw new Error(`workload ${where}: ${message}`);
  };

  const scalars: {g?: number; mb?: number; ic?: number; oc?: number} = {};
  const axes: Record<Axis, AxisFields> = {d: {}, h: {}, w: {}};
  let name: string | undefined;
  let rest = descriptor;
  while (rest.length > 0) {
    if (rest[0] === '_' || /\s/.test(rest[0])) {
      rest = rest.slice(1);
      continue;
    }
    const nameMatch = NAME_PATTERN.exec(rest);
    if (nameMatch) {
      if (name !== undefined) fail('the name is given twice');
      name = nameMatch[1] ?? nameMatch[2];
      rest = rest.slice(nameMatch[0].length);
      continue;
    }
    const field = FIELD_PATTERN.exec(rest);
    if (!field) fail(`cannot read a field at '${rest}'`);
    const [text, key, digits] = field!;
    const value = Number(digits);
    if (key === 'g' || key === 'mb' || key === 'ic' || key === 'oc') {
      if (scalars[key] !== undefined) fail(`field '${key}' is given twice`);
      scalars[key] = value;
    } else {
      const fields = axes[key[1] as Axis];
      const letter = key[0] as AxisField;
      if (fields[letter] !== undefined) fail(`field '${key}' is given twice`);
      fields[letter] = value;
    }
    rest = rest.slice(text.length);
  }

  // Spatial rank and the missing-dimension rules.
  const given = (axis: Axis) => Object.keys(axes[axis]).length > 0;
  let spatialRank: 1 | 2 | 3;
  if (given('d')) {
    spatialRank = 3;
    if (!given('h') && !given('w')) {
      axes.h = {...axes.d};
      axes.w = {...axes.d};
    } else if (!given('h') || !given('w')) {
      fail('a 3-D problem gives d and one of h, w: give both or neither');
    }
  } else if (given('h')) {
    spatialRank = 2;
    if (!given('w')) axes.w = {...axes.h};
  } else if (given('w')) {
    spatialRank = 1;
  } else {
    fail('no spatial sizes (i/o/k for d, h or w)');
  }
  const active: readonly Axis[] = AXES.slice(3 - spatialRank!);

  const groups = scalars.g ?? 1;
  const batch = scalars.mb ?? 2;
  const {ic, oc} = scalars;
  if (ic === undefined || oc === undefined) fail('ic and oc are required');
  if (!(groups >= 1)) fail(`groups must be positive, got ${groups}`);
  if (!(ic! >= 1) || !(oc! >= 1)) fail(`channels must be positive, got ic ${ic} oc ${oc}`);
  if (ic! % groups !== 0 || oc! % groups !== 0) fail(`groups ${groups} must divide ic ${ic} and oc ${oc}`);

  const resolved = active.map(axis => {
    const f = axes[axis];
    const label = (field: AxisField) => `${field}${axis}`;
    if (f.i === undefined || f.k === undefined) fail(`${label('i')} and ${label('k')} are required`);
    const i = f.i!;
    const k = f.k!;
    const s = f.s ?? 1;
    const q = f.d ?? 0;
    if (i < 1 || k < 1 || s < 1 || q < 0) fail(`axis ${axis} needs i, k, s >= 1 and d >= 0`);
    const extent = (k - 1) * (q + 1) + 1;
    let p = f.p;
    let o = f.o;
    if (o === undefined) {
      p = p ?? 0;
      o = kind === 'conv' ? Math.trunc((i - extent + 2 * p) / s) + 1 : (i - 1) * s + extent - 2 * p;
    } else if (p === undefined) {
      // benchdnn: the pad that makes a given output size come out, split evenly.
      p = Math.trunc((kind === 'conv' ? (o - 1) * s - i + extent : (i - 1) * s - o + extent) / 2);
    }
    if (o < 1) fail(`axis ${axis}: output size ${o} is not positive`);
    if (p < 0) fail(`axis ${axis}: begin pad ${p} is negative`);
    const derivedEnd = kind === 'conv' ? (o - 1) * s - i + extent - p : (i - 1) * s - o + extent - p;
    const pe = Math.max(0, derivedEnd);
    let outputPadding = 0;
    if (kind === 'conv') {
      const check = Math.floor((i + p + pe - extent) / s) + 1;
      if (check !== o) fail(`axis ${axis}: pads ${p}/${pe} give output size ${check}, not ${o}`);
    } else {
      outputPadding = pe - derivedEnd;  // what the clamp added back to the transposed output
      const check = (i - 1) * s - p - pe + extent + outputPadding;
      if (check !== o || outputPadding >= s) {
        fail(`axis ${axis}: pads ${p}/${pe} give output size ${check}, not ${o} (end pad ${derivedEnd})`);
      }
    }
    return {i, o, k, s, p, pe, dilation: q + 1, outputPadding};
  });

  let repeat = 1;
  let baseName = name ?? `${source}:${line}`;
  const repeatMatch = name === undefined ? null : /^(.*)\*(\d+)$/.exec(name);
  if (repeatMatch) {
    baseName = repeatMatch[1];
    repeat = Number(repeatMatch[2]);
  }
  const list = (pick: (a: typeof resolved[number]) => number) => Object.freeze(resolved.map(pick));
  return Object.freeze({
    name: baseName,
    repeat,
    source,
    line,
    descriptor,
    kind,
    batch,
    groups,
    ic: ic!,
    oc: oc!,
    spatialRank: spatialRank!,
    inputSize: list(a => a.i),
    outputSize: list(a => a.o),
    kernel: list(a => a.k),
    strides: list(a => a.s),
    padsBegin: list(a => a.p),
    padsEnd: list(a => a.pe),
    dilations: list(a => a.dilation),
    outputPadding: list(a => a.outputPadding),
  });
}

/**
 * Finds a problem by name in a list: the full name (`resnet_50:res2a_branch2b`) or the part
 * after the last ':' (`res2a_branch2b`). Throws, listing some names, when there is no match.
 */
export function findProblem(problems: readonly Problem[], name: string): Problem {
  const match = problems.find(p => p.name === name) ?? problems.find(p => p.name.split(':').pop() === name);
  if (!match) {
    const known = problems.map(p => p.name);
    throw new Error(`no workload named '${name}' (${known.length} in the list: ${known.slice(0, 12).join(', ')}${
        known.length > 12 ? ', …' : ''})`);
  }
  return match;
}

/** The arguments of our op for a problem: NXC tensors, XIO filter. */
interface OpArgumentsBase {
  readonly batch: number;
  /** conv: [N, i…, ic]; deconv: the transposed convolution's input [N, i…, ic]. */
  readonly inputShape: number[];
  /** conv: [N, o…, oc]; deconv: the transposed convolution's output gradient [N, o…, oc]. */
  readonly outputDeltaShape: number[];
}
export type OpArguments = OpArgumentsBase&({readonly kind: 'conv'; readonly attrs: ConvolutionBackpropFiltersAttrs}|
                                           {readonly kind: 'deconv'; readonly attrs: ConvTransposeBackpropFiltersAttrs});

/**
 * The call of convolutionBackpropFilters (conv) or convTransposeBackpropFilters (deconv) for a
 * problem, with the batch overridden (`batch` defaults to the file's). filterShape holds the
 * spatial kernel sizes; the channels follow from the tensors and groups.
 */
export function toOpArguments(problem: Problem, batch = problem.batch): OpArguments {
  if (!Number.isSafeInteger(batch) || batch < 1) throw new Error(`batch must be a positive integer, got ${batch}`);
  const attrs: ConvolutionBackpropFiltersAttrs = {
    strides: [...problem.strides],
    padsBegin: [...problem.padsBegin],
    padsEnd: [...problem.padsEnd],
    dilations: [...problem.dilations],
    groups: problem.groups,
    dataFormat: 'NXC',
    filterFormat: 'XIO',
    filterShape: [...problem.kernel],
  };
  const inputShape = [batch, ...problem.inputSize, problem.ic];
  const outputDeltaShape = [batch, ...problem.outputSize, problem.oc];
  if (problem.kind === 'conv') return {kind: 'conv', batch, inputShape, outputDeltaShape, attrs};
  const transposedAttrs: ConvTransposeBackpropFiltersAttrs = {...attrs};
  if (problem.outputPadding.some(v => v !== 0)) transposedAttrs.outputPadding = [...problem.outputPadding];
  return {kind: 'deconv', batch, inputShape, outputDeltaShape, attrs: transposedAttrs};
}

/** A workload's name for tables: `ResNet-50 res2a_branch2b`, `MobileNet conv3_1/dw`, `… (deconv)`. */
export const shortName = (p: Problem) => `${p.name.replace(/^resnet_50:/, 'ResNet-50 ').replace(/^mobilenet:/, 'MobileNet ')
                                      .replace(/^googlenet_v1:/, 'GoogLeNet ')}${p.kind === 'deconv' ? ' (deconv)' : ''}`;

/** A compact shape summary: `64→64 56x56 k3x3 s1 p1/1`, with g, dilation and deconv marks where they apply. */
export function describeProblem(problem: Problem): string {
  const x = (values: readonly number[]) => values.join('x');
  const same = (values: readonly number[]) => values.every(v => v === values[0]) ? `${values[0]}` : x(values);
  const parts = [
    `${problem.ic}→${problem.oc}`,
    `${x(problem.inputSize)}→${x(problem.outputSize)}`,
    `k${x(problem.kernel)}`,
    `s${same(problem.strides)}`,
    `p${same(problem.padsBegin)}/${same(problem.padsEnd)}`,
  ];
  if (problem.dilations.some(d => d !== 1)) parts.push(`dil${same(problem.dilations)}`);
  if (problem.groups !== 1) parts.push(`g${problem.groups}`);
  return parts.join(' ');
}
