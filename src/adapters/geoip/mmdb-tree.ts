// The search tree and file layout of a MaxMind DB file (MaxMind DB File Format Specification 2.0): nodes of two
// records of 24, 28 or 32 bits, read and written; the file as tree, 16 zero bytes, data section, metadata.
import { DataSection, type MmdbValue } from './mmdb-data.js';

/** An address (IPv6 or IPv4 text, as the tree is) whose walk from the root follows `bits`. */
export function addressOf(bits: Uint8Array, ipVersion: number): string {
  const word = (i: number, width: number) => bits.subarray(i, i + width).reduce((n, b) => n * 2 + b, 0);
  if (ipVersion === 4) return [0, 8, 16, 24].map((i) => word(i, 8)).join('.');
  return Array.from({ length: 8 }, (_, g) => word(g * 16, 16).toString(16)).join(':');
}

/** Reads one record of the original tree (node `n`, side 0 or 1) for its record size. */
export function recordReader(db: Buffer, recordSize: number): (n: number, side: number) => number {
  const bytes = recordSize / 4;
  return (n, side) => {
    const at = n * bytes;
    if (recordSize === 24) return db.readUIntBE(at + side * 3, 3);
    if (recordSize === 32) return db.readUInt32BE(at + side * 4);
    const low = db.readUIntBE(at + side * 4, 3);
    return side === 0 ? ((db[at + 3] & 0xf0) << 20) | low : ((db[at + 3] & 0x0f) << 24) | low;
  };
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
