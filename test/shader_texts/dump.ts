/**
 * Records every shader text of the webgl and webgpu kernels for every problem of
 * test/shader_texts/problems.ts (see texts.ts), and compares or digests the records.
 *
 *   tsx test/shader_texts/dump.ts --out FILE         write every record (texts in full) as JSON
 *   tsx test/shader_texts/dump.ts --compare FILE     compare today's records with FILE's; exit 1 on a difference
 *   tsx test/shader_texts/dump.ts --digest           rewrite test/shader_texts/digest.json (a sha256 prefix per problem
 *                                                    and program, and each problem's shapes and attributes)
 *
 * The workloads folder (for shapes_tfjs_training) is $CONV_WORKLOADS_DIR or ../shared/workloads.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import {digestsOf, recordsOf} from './records';
import {textProblems} from './problems';

async function main() {
  const args = process.argv.slice(2);
  const problems = await textProblems();
  const records = recordsOf(problems);
  if (args[0] === '--out') {
    fs.mkdirSync(path.dirname(path.resolve(args[1])), {recursive: true});
    fs.writeFileSync(args[1], JSON.stringify(records));
    console.log(`${Object.keys(records).length} records of ${problems.length} problems -> ${args[1]}`);
  } else if (args[0] === '--compare') {
    const before = JSON.parse(fs.readFileSync(args[1], 'utf8')) as Record<string, unknown>;
    const keys = new Set([...Object.keys(before), ...Object.keys(records)]);
    let differing = 0;
    for (const key of keys) {
      const a = JSON.stringify(before[key]);
      const b = JSON.stringify(records[key]);
      if (a !== b) {
        if (differing < 10) console.log(`differs: ${key}\n  before: ${a?.slice(0, 300)}\n  now:    ${b?.slice(0, 300)}`);
        differing++;
      }
    }
    console.log(`${keys.size} records compared, ${differing} differ`);
    process.exitCode = differing === 0 ? 0 : 1;
  } else if (args[0] === '--digest') {
    const file = path.join(__dirname, 'digest.json');
    const digests = digestsOf(problems);
    fs.writeFileSync(file, `{"problems": [\n${problems.map(problem => JSON.stringify(problem)).join(',\n')}\n],\n"digests": {\n${
        Object.entries(digests).map(([id, programs]) => `${JSON.stringify(id)}: ${JSON.stringify(programs)}`).join(',\n')}\n}}\n`);
    console.log(`${Object.keys(records).length} digests of ${problems.length} problems -> ${file}`);
  } else {
    console.error('usage: tsx test/shader_texts/dump.ts --out FILE | --compare FILE | --digest');
    process.exitCode = 2;
  }
}

void main();
