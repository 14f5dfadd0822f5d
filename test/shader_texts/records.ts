import {createHash} from 'node:crypto';

import type {TextProblem} from './problems';
import {ProgramRecord, shaderTexts} from './texts';

/** Every problem's records, keyed `<problem id>|<program family>/<input kind>/<program>`. */
export function recordsOf(problems: readonly TextProblem[]): Record<string, ProgramRecord> {
  const records: Record<string, ProgramRecord> = {};
  for (const problem of problems) {
    for (const [key, record] of Object.entries(shaderTexts(problem))) records[`${problem.id}|${key}`] = record;
  }
  return records;
}

/** The first 16 hex digits of the sha256 of a record's JSON. */
export function recordDigest(record: ProgramRecord): string {
  return createHash('sha256').update(JSON.stringify(record)).digest('hex').slice(0, 16);
}

/** Each problem's records' digests, keyed by problem id, then `<program family>/<input kind>/<program>`. */
export function digestsOf(problems: readonly TextProblem[]): Record<string, Record<string, string>> {
  return Object.fromEntries(problems.map(problem => [
    problem.id, Object.fromEntries(Object.entries(shaderTexts(problem)).map(([key, record]) => [key, recordDigest(record)])),
  ]));
}
