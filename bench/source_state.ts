/** Which code a benchmark measured: the commit, and which folders of the code had uncommitted changes. */
import {execFileSync} from 'child_process';
import * as path from 'path';

let cached: string | undefined;

export function sourceState(): string {
  if (cached !== undefined) return cached;
  const root = path.resolve(__dirname, '..');
  try {
    const git = (...args: string[]) => execFileSync('git', args, {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']});
    const commit = git('rev-parse', '--short', 'HEAD').trim();
    // The folders (two levels) with uncommitted changes to the code measured.
    const changed = new Set(git('status', '--porcelain', '--', 'kernels', 'src', 'scripts')
                                .split('\n')
                                .filter(line => line.length > 3)
                                .map(line => line.slice(3).split('/').slice(0, 2).join('/').replace(/\.[^/]*$/, '')));
    cached = `commit ${commit}${changed.size > 0 ? ` + uncommitted changes in ${[...changed].sort().join(', ')}` : ''}`;
  } catch {
    cached = 'commit unknown (no git)';
  }
  return cached;
}
