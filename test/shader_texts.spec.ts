import * as fs from 'node:fs';
import * as path from 'node:path';

import {digestsOf} from './shader_texts/records';
import type {TextProblem} from './shader_texts/problems';

/**
 * The webgl and webgpu kernels' shader texts (with their uniforms, program fields and cache
 * keys) for every problem of the case table, the golden files and shapes_tfjs_training, under
 * every input kind the browser specs run (test/shader_texts/texts.ts), against the sha256
 * digests in test/shader_texts/digest.json. A text changed on purpose: rewrite the digest with
 * `tsx test/shader_texts/dump.ts --digest` and say in the commit which texts changed and why.
 */
describe('shader texts', () => {
  const {problems, digests} = JSON.parse(fs.readFileSync(path.join(__dirname, 'shader_texts', 'digest.json'), 'utf8')) as
      {problems: TextProblem[]; digests: Record<string, Record<string, string>>};

  it('cover the case table, the golden files and shapes_tfjs_training', () => {
    const sources = new Set(problems.map(problem => problem.id.split('/')[0]));
    expect([...sources].sort()).toEqual(['cases', 'golden', 'shapes_tfjs_training', 'training']);
  });

  it('are those of the digest, for every problem and program', () => {
    const flat = (byProblem: Record<string, Record<string, string>>) => Object.fromEntries(Object.entries(byProblem).flatMap(
        ([id, programs]) => Object.entries(programs).map(([key, digest]) => [`${id}|${key}`, digest])));
    const expected = flat(digests);
    const now = flat(digestsOf(problems));
    const differing = Object.keys({...expected, ...now}).filter(key => expected[key] !== now[key]);
    expect(differing.slice(0, 20)).withContext(`${differing.length} records differ`).toEqual([]);
    expect(Object.keys(now).length).toBe(Object.keys(expected).length);
  });
});
