// Imported first by bench/cpu.ts: with --relaxed-ab, V8 must know relaxed SIMD before the
// package compiles its relaxed build (Node 20 has it behind --experimental-wasm-relaxed-simd).
import * as v8 from 'v8';

if (process.argv.includes('--relaxed-ab')) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
