// The data section of a MaxMind DB file (MaxMind DB File Format Specification 2.0): maps, arrays, strings, doubles,
// booleans, unsigned integers and pointers. Ours: no npm writer runs without native code; only what slim-city.ts needs.

/** A value written with an unsigned integer type (metadata only); plain numbers are written as doubles. */
export class Uint {
  constructor(readonly value: number, readonly bytes: 2 | 4 | 8) {}
}

export type MmdbValue = string | number | boolean | Uint | MmdbValue[] | { [key: string]: MmdbValue };

/** Control byte(s) of a field: the type in the top bits (extended types in a second byte), then the size. */
function control(type: number, size: number): number[] {
  const first = type <= 7 ? type << 5 : 0;
  const ext = type > 7 ? [type - 7] : [];
  if (size < 29) return [first | size, ...ext];
  if (size < 285) return [first | 29, ...ext, size - 29];
  if (size < 65_821) return [first | 30, ...ext, (size - 285) >> 8, (size - 285) & 0xff];
  const s = size - 65_821;
  return [first | 31, ...ext, s >> 16, (s >> 8) & 0xff, s & 0xff];
}

/** A pointer to a data section offset, in the shortest of the four forms. */
function pointer(p: number): number[] {
  if (p < 2048) return [0x20 | (p >> 8), p & 0xff];
  if (p < 526_336) return [0x28 | ((p - 2048) >> 16), ((p - 2048) >> 8) & 0xff, (p - 2048) & 0xff];
  const q = p - 526_336;
  if (p < 134_744_064) return [0x30 | (q >> 24), (q >> 16) & 0xff, (q >> 8) & 0xff, q & 0xff];
  return [0x38, p >>> 24, (p >> 16) & 0xff, (p >> 8) & 0xff, p & 0xff];
}

/**
 * The data section: values appended in order; a string, map or array written before is written again as a pointer
 * to its first copy (what MaxMind's own writers do: the many records of a city share its names).
 */
export class DataSection {
  private buf = Buffer.alloc(1 << 20);
  private size = 0;
  private readonly seen = new Map<string, number>();

  constructor(private readonly share = true) {}

  /** Appends a value; returns its offset in the section. */
  write(value: MmdbValue): number {
    const key = typeof value === 'object' && !(value instanceof Uint) ? JSON.stringify(value) : typeof value === 'string' ? `s${value}` : null;
    const at = key === null || !this.share ? undefined : this.seen.get(key);
    if (at !== undefined) return (this.push(pointer(at)), at);
    const offset = this.size;
    if (key !== null && this.share) this.seen.set(key, offset);
    this.encode(value);
    return offset;
  }

  bytes = (): Buffer => this.buf.subarray(0, this.size);

  private encode(value: MmdbValue): void {
    if (typeof value === 'string') return this.push(control(2, Buffer.byteLength(value)), Buffer.from(value, 'utf8'));
    if (typeof value === 'boolean') return this.push(control(14, value ? 1 : 0));
    if (typeof value === 'number' || value instanceof Uint) {
      const [type, size] = typeof value === 'number' ? [3, 8] : [{ 2: 5, 4: 6, 8: 9 }[value.bytes], value.bytes];
      const b = Buffer.alloc(size);
      if (typeof value === 'number') b.writeDoubleBE(value);
      else b.writeUIntBE(value.value, size - Math.min(6, size), Math.min(6, size)); // 6 bytes at most: enough for a date
      return this.push(control(type, size), b);
    }
    const entries: [string | null, MmdbValue][] = Array.isArray(value) ? value.map((v) => [null, v]) : Object.entries(value);
    this.push(control(Array.isArray(value) ? 11 : 7, entries.length));
    for (const [k, v] of entries) (k === null || this.write(k), this.write(v));
  }

  private push(head: number[], body?: Buffer): void {
    const need = this.size + head.length + (body?.length ?? 0);
    if (need > this.buf.length) this.buf = Buffer.concat([this.bytes(), Buffer.alloc(Math.max(need, this.buf.length * 2) - this.size)]);
    for (const b of head) this.buf[this.size++] = b;
    if (body) this.size += body.copy(this.buf, this.size);
  }
}
