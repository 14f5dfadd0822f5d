import {execFile} from 'node:child_process';
import * as path from 'node:path';

/**
 * `npm start` (demo/main.ts) as a user runs it, in a child process against the built package:
 * it trains with the loss falling and prints a passing gradient-check table, and it exits
 * non-zero when training diverges (made to, with a learning rate of 5).
 */
interface Run {
  code: number;
  output: string;
}

function runDemo(env: Record<string, string>): Promise<Run> {
  const root = path.resolve(__dirname, '..');
  return new Promise(resolve => {
    execFile(
        process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'demo/main.ts'],
        {cwd: root, env: {...process.env, ...env}, encoding: 'utf8'}, (error, stdout, stderr) => {
          resolve({code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout + stderr});
        });
  });
}

describe('npm start (demo/main.ts)', () => {
  let normal: Run;
  let diverging: Run;
  // Both at once: each is mostly single-threaded.
  beforeAll(async () => {
    [normal, diverging] = await Promise.all([runDemo({}), runDemo({DEMO_LEARNING_RATE: '5'})]);
  }, 180000);

  it('trains with the loss falling every epoch, checks every parameter\'s gradient, and exits 0', () => {
    expect(normal.code).withContext(normal.output).toBe(0);
    const epochLosses = [...normal.output.matchAll(/^epoch +\d+\/\d+ \[#+\] +\d+\/\d+ +loss (\d+\.\d+)$/gm)].map(m => Number(m[1]));
    expect(epochLosses.length).withContext(normal.output).toBe(8);
    for (let i = 1; i < epochLosses.length; i++) expect(epochLosses[i]).toBeLessThan(epochLosses[i - 1]);
    const errors = [...normal.output.matchAll(/^ {2}conv\d\.\S+ .* (\d\.\d+e[-+]\d+)$/gm)].map(m => Number(m[1]));
    expect(errors.length).withContext(normal.output).toBe(6);
    for (const error of errors) expect(error).toBeLessThan(1e-3);
  });

  it('exits non-zero, saying so, when training diverges', () => {
    expect(diverging.code).withContext(diverging.output).not.toBe(0);
    expect(diverging.output).toContain('training diverged');
  });
});
