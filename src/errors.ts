/**
 * The one way this package reports bad input: `<op>: <subject> <problem>, got <value>`, e.g.
 * "ConvolutionBackpropFilters: attribute 'strides' must hold 2 positive integers for a 4-D input, got [2,0]".
 * The message is built only when something is wrong.
 */
export function opError(op: string, subject: string, problem: string, got?: unknown): Error {
  const gotPart = arguments.length > 3 ? `, got ${show(got)}` : '';
  return new Error(`${op}: ${subject} ${problem}${gotPart}`);
}

/** A compact, unambiguous rendering of any user value for an error message. */
export function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (value === undefined || value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    return `[${Array.from(value as ArrayLike<unknown>, show).join(',')}]`;
  }
  const constructorName = (value as object).constructor?.name;
  if (constructorName && constructorName !== 'Object') return `a ${constructorName}`;
  try {
    return JSON.stringify(value);
  } catch {
    return 'an object';
  }
}
