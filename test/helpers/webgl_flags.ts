/**
 * WEBGL_PACK and the flags whose defaults follow it (tfjs evaluates those once and caches them,
 * so switching packing between environments means setting them all).
 */
export function packing(on: boolean): Record<string, boolean> {
  const followers = [
    'NORMALIZATION', 'CLIP', 'DEPTHWISECONV', 'BINARY_OPERATIONS', 'UNARY_OPERATIONS', 'ARRAY_OPERATIONS',
    'IMAGE_OPERATIONS', 'REDUCE',
  ];
  return Object.fromEntries(
      [['WEBGL_PACK', on], ['WEBGL_LAZILY_UNPACK', on], ...followers.map(name => [`WEBGL_PACK_${name}`, on])]);
}
