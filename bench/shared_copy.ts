/**
 * `npm run bench:copy [-- --runs N]`: how fast this runtime copies floats into the threads'
 * shared WebAssembly memory, as the calling thread packs a call's samples: `TypedArray.set` into
 * unshared memory (the one-thread path), `set` into shared memory, and `copyFloats`
 * (float_copy.ts) staged (`set` through a small unshared buffer where the ends disagree mod 8
 * bytes) and, where Node has it, by memmove. 3 MiB in pieces of 4 KiB to 1 MiB, as a step's lines are; GB/s,
 * the median of the runs. docs/threads.md quotes it. Prints only.
 */
import {copyFloats, sharedCopyMethod} from '../kernels/host/simd/float_copy';

import {commandLine, positiveInteger, valueOption} from './args';
import {markdownTable, summarize} from './report';

const options = commandLine({
  usage: 'npm run bench:copy [-- options]',
  summary: 'GB/s of copies into shared memory, as the packing does them: set, staged set, memmove.',
  options: {'runs': valueOption('N', 'timed runs of each copy', 30, positiveInteger)},
});

const TOTAL_FLOATS = 3 * 2 ** 18;  // 3 MiB
const PIECE_BYTES = [4096, 65536, 2 ** 20];

function gigabytesPerSecond(copy: () => void): number {
  for (let i = 0; i < 5; i++) copy();
  const times: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    const start = performance.now();
    copy();
    times.push(performance.now() - start);
  }
  return 4 * TOTAL_FLOATS / summarize(times).median / 1e6;
}

function main() {
  // One float of slack on each side, so that either end can sit 4 bytes off its 8-byte alignment.
  const source = new Float32Array(TOTAL_FLOATS + 1).map((_, i) => i);
  const unshared = new Float32Array(new WebAssembly.Memory({initial: 64}).buffer);
  const shared = new Float32Array(new WebAssembly.Memory({initial: 64, maximum: 64, shared: true}).buffer);
  const ways: Array<[string, (from: Float32Array, to: Float32Array, at: number) => void, Float32Array]> = [
    ['set, into unshared memory', (from, to, at) => to.set(from, at), unshared],
    ['set, into shared memory', (from, to, at) => to.set(from, at), shared],
    ['copyFloats, staged set', (from, to, at) => copyFloats(from, to, at, 'staged set'), shared],
  ];
  if (sharedCopyMethod() === 'memmove') ways.push(['copyFloats, memmove', (from, to, at) => copyFloats(from, to, at, 'memmove'), shared]);
  const rows = ways.map(([name, copyPiece, to]) => [name, ...PIECE_BYTES.flatMap(pieceBytes => [0, 1].map(shift => {
    const pieceFloats = pieceBytes / 4;
    const from = source.subarray(shift, shift + TOTAL_FLOATS);
    return gigabytesPerSecond(() => {
      for (let at = 0; at < TOTAL_FLOATS; at += pieceFloats) copyPiece(from.subarray(at, at + pieceFloats), to, 16 + at);
    }).toFixed(1);
  }))]);
  const runtime = typeof (globalThis as {Deno?: unknown}).Deno !== 'undefined' ? 'Deno' :
      typeof (globalThis as {Bun?: unknown}).Bun !== 'undefined' ? 'Bun' : `Node ${process.version}`;
  console.log(`${runtime}: 3 MiB copied in pieces, GB/s (median of ${options.runs} runs); "+4 B" has the source 4 bytes ` +
      `off the destination's alignment mod 8, as every other sample of a tensor whose samples have an odd number of ` +
      `floats. The packing copies with: ${sharedCopyMethod()}.\n`);
  console.log(markdownTable(
      ['copy', ...PIECE_BYTES.flatMap(bytes => [`${bytes / 1024} KiB`, `${bytes / 1024} KiB +4 B`])], rows,
      [false, ...Array(2 * PIECE_BYTES.length).fill(true)]));
}

main();
