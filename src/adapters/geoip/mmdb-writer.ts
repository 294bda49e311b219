// A writer of MaxMind DB files (MaxMind DB File Format Specification 2.0): data section, search tree, metadata.
// Ours because no npm writer runs without native code or Perl; it writes only the types our derived City file needs.

/** A value written with an unsigned integer type (metadata only); plain numbers are written as doubles. */
export class Uint {
  constructor(
    readonly value: number,
    readonly bytes: 2 | 4 | 8,
  ) {}
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
  if (p < 134_744_064) {
    const q = p - 526_336;
    return [0x30 | (q >> 24), (q >> 16) & 0xff, (q >> 8) & 0xff, q & 0xff];
  }
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

  bytes(): Buffer {
    return this.buf.subarray(0, this.size);
  }

  private encode(value: MmdbValue): void {
    if (typeof value === 'string') {
      const b = Buffer.from(value, 'utf8');
      this.push(control(2, b.length), b);
    } else if (typeof value === 'number') {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(value);
      this.push(control(3, 8), b);
    } else if (typeof value === 'boolean') this.push(control(14, value ? 1 : 0));
    else if (value instanceof Uint) {
      const b = Buffer.alloc(value.bytes);
      b.writeUIntBE(value.value, value.bytes - Math.min(6, value.bytes), Math.min(6, value.bytes));
      this.push(control(value.bytes === 2 ? 5 : value.bytes === 4 ? 6 : 9, value.bytes), b);
    } else if (Array.isArray(value)) {
      this.push(control(11, value.length));
      for (const v of value) this.write(v);
    } else {
      const entries = Object.entries(value);
      this.push(control(7, entries.length));
      for (const [k, v] of entries) (this.write(k), this.write(v));
    }
  }

  private push(head: number[], body?: Buffer): void {
    const need = this.size + head.length + (body?.length ?? 0);
    if (need > this.buf.length) this.buf = Buffer.concat([this.bytes(), Buffer.alloc(Math.max(need, this.buf.length * 2) - this.size)]);
    for (const b of head) this.buf[this.size++] = b;
    if (body) this.size += body.copy(this.buf, this.size);
  }
}

/** One search tree node's two records, each a node number, the node count (no data) or node count + 16 + offset. */
export function writeNode(out: Buffer, at: number, recordSize: 24 | 28 | 32, left: number, right: number): void {
  if (recordSize === 24) (out.writeUIntBE(left, at, 3), out.writeUIntBE(right, at + 3, 3));
  else if (recordSize === 32) (out.writeUInt32BE(left, at), out.writeUInt32BE(right, at + 4));
  else {
    out.writeUIntBE(left & 0xffffff, at, 3);
    out[at + 3] = ((left >>> 24) << 4) | (right >>> 24);
    out.writeUIntBE(right & 0xffffff, at + 4, 3);
  }
}

/** The smallest record size that can address every node and the whole data section. */
export const recordSizeFor = (nodeCount: number, dataSize: number): 24 | 28 | 32 =>
  nodeCount + 16 + dataSize < 2 ** 24 ? 24 : nodeCount + 16 + dataSize < 2 ** 28 ? 28 : 32;

/** The file: search tree, 16 zero bytes, data section, then the metadata marker and map. */
export function assemble(tree: Buffer, data: Buffer, metadata: Record<string, MmdbValue>): Buffer {
  const meta = new DataSection(false);
  meta.write(metadata);
  return Buffer.concat([tree, Buffer.alloc(16), data, Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'), meta.bytes()]);
}
