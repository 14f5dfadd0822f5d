/** Which code a benchmark measured: the commit, and whether the kernels or src had uncommitted changes. */
import {execFileSync} from 'child_process';
import * as path from 'path';

let cached: string | undefined;

export function sourceState(): string {
  if (cached !== undefined) return cached;
  const root = path.resolve(__dirname, '..');
  try {
    const git = (...args: string[]) => execFileSync('git', args, {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    const dirty = git('status', '--porcelain', '--', 'kernels', 'src', 'scripts') !== '';
    cached = `commit ${commit}${dirty ? ' + uncommitted changes in kernels/src/scripts' : ''}`;
  } catch {
    cached = 'commit unknown (no git)';
  }
  return cached;
}
