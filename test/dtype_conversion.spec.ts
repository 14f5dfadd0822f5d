import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The f16 and bf16 → float32 conversions docs/design.md gives users ("Types and precision"), run
 * as they are written there: the ```js block that defines f16ToFloat32 and bf16ToFloat32 is
 * read from the page, so the page cannot drift from what is tested. Each is checked on all
 * 65,536 bit patterns against a decode built another way (the float32 bit pattern assembled
 * from the fields), and on named values.
 */
type Conversion = (bits: Uint16Array) => Float32Array;

function conversionsFromDesignPage(): {f16ToFloat32: Conversion; bf16ToFloat32: Conversion} {
  const page = fs.readFileSync(path.resolve(__dirname, '..', 'docs', 'design.md'), 'utf8');
  const block = [...page.matchAll(/```js\n([\s\S]*?)```/g)].map(m => m[1]).find(code => code.includes('function f16ToFloat32'));
  if (block === undefined) throw new Error('docs/design.md has no ```js block defining f16ToFloat32');
  // The block ends with a usage line that needs tf and the user's data: keep the definitions.
  const definitions = block.split('\n').filter(line => !/^const input = /.test(line)).join('\n');
  return new Function(`${definitions}\nreturn {f16ToFloat32, bf16ToFloat32};`)() as ReturnType<typeof conversionsFromDesignPage>;
}

/** float32 bits of an f16 pattern: fields moved into place (subnormals normalized by shifting). */
function f16BitsToFloat32Bits(h: number): number {
  const sign = (h & 0x8000) << 16;
  let exponent = (h >> 10) & 0x1f;
  let fraction = h & 0x3ff;
  if (exponent === 31) return (sign | 0x7f800000 | (fraction << 13)) >>> 0;
  if (exponent === 0) {
    if (fraction === 0) return sign >>> 0;
    exponent = 1;
    while ((fraction & 0x400) === 0) {
      fraction <<= 1;
      exponent--;
    }
    fraction &= 0x3ff;
  }
  return (sign | ((exponent - 15 + 127) << 23) | (fraction << 13)) >>> 0;
}

function float32FromBits(word: number): number {
  return new Float32Array(new Uint32Array([word]).buffer)[0];
}

describe('f16 and bf16 to float32, as docs/design.md gives them', () => {
  const {f16ToFloat32, bf16ToFloat32} = conversionsFromDesignPage();
  const every = new Uint16Array(65536).map((_, i) => i);

  it('f16ToFloat32 decodes every bit pattern as the bit-level decode does', () => {
    const values = f16ToFloat32(every);
    expect(values.length).toBe(65536);
    const wrong: string[] = [];
    for (let h = 0; h < 65536; h++) {
      const expected = float32FromBits(f16BitsToFloat32Bits(h));
      const same = Number.isNaN(expected) ? Number.isNaN(values[h]) : Object.is(values[h], expected);
      if (!same && wrong.length < 5) wrong.push(`0x${h.toString(16)}: ${values[h]} (expected ${expected})`);
    }
    expect(wrong).toEqual([]);
  });

  it('f16ToFloat32 gives the named values', () => {
    const values = Array.from(f16ToFloat32(new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x3555])));
    expect(values.slice(0, 9)).toEqual([1, -2, 65504, 2 ** -24, 1023 * 2 ** -24, 2 ** -14, -0, Infinity, -Infinity]);
    expect(Object.is(values[6], -0)).toBe(true);
    expect(values[9]).toBeNaN();
    expect(values[10]).toBe(0.333251953125);
  });

  it('bf16ToFloat32 puts the bits in the high half of a float32', () => {
    const values = bf16ToFloat32(every);
    let wrong = 0;
    for (let b = 0; b < 65536; b++) {
      const expected = float32FromBits((b << 16) >>> 0);
      if (!(Number.isNaN(expected) ? Number.isNaN(values[b]) : Object.is(values[b], expected))) wrong++;
    }
    expect(wrong).toBe(0);
    expect(Array.from(bf16ToFloat32(new Uint16Array([0x3f80, 0xc000, 0x7f80, 0xff80, 0x0001]))))
        .toEqual([1, -2, Infinity, -Infinity, 2 ** -133]);
  });
});
