/**
 * `makeText` kept per key: a shader text (GLSL or WGSL) made from a small key object holding all the text
 * depends on (and nothing else: `makeText` sees only the key), compared as JSON. A call then
 * pays for its key, not for writing the text out (tens of KB for written rows over wide rows),
 * and the compiled-program cache, keyed by the text, is handed the same string. One entry per
 * distinct text, as there is one compiled program per text.
 */
export function textPerKey<Key>(makeText: (key: Key) => string): (key: Key) => string {
  const texts = new Map<string, string>();
  return key => {
    const json = JSON.stringify(key);
    let text = texts.get(json);
    if (text === undefined) texts.set(json, text = makeText(key));
    return text;
  };
}
