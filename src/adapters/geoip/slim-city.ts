// A GeoIP2/GeoLite2 City database cut down to what geoip-reader returns (English names, no geoname ids, accuracy or
// registered country), written as a MaxMind DB: the service holds this file in memory instead of the full one.
import { Reader, type CityResponse } from 'maxmind';
import { assemble, DataSection, recordSizeFor, Uint, writeNode, type MmdbValue } from './mmdb-writer.js';

type Names = { names?: { en?: string } };
const en = (n: Names | undefined): Record<string, MmdbValue> => (n?.names?.en === undefined ? {} : { names: { en: n.names.en } });

/** Drops undefined fields and empty maps: geoip-reader reads every field through `?.`, so absent and empty agree. */
function compact(o: Record<string, MmdbValue | undefined>): Record<string, MmdbValue> | undefined {
  const kept = Object.entries(o).filter(([, v]) => v !== undefined && !(typeof v === 'object' && Object.keys(v).length === 0));
  return kept.length ? (Object.fromEntries(kept) as Record<string, MmdbValue>) : undefined;
}

/** The fields geoip-reader's locate() reads, and nothing else (a record itself is kept even when empty). */
export function slimCityRecord(r: CityResponse): Record<string, MmdbValue> {
  const sub = r.subdivisions?.[0];
  const subdivision = sub && compact({ iso_code: sub.iso_code, ...en(sub) });
  return (
    compact({
      city: compact(en(r.city)),
      continent: compact({ code: r.continent?.code, ...en(r.continent) }),
      country: compact({ iso_code: r.country?.iso_code, ...en(r.country), is_in_european_union: r.country?.is_in_european_union === true || undefined }),
      location: compact({ latitude: r.location?.latitude, longitude: r.location?.longitude, time_zone: r.location?.time_zone }),
      postal: compact({ code: r.postal?.code }),
      subdivisions: subdivision ? [subdivision] : undefined,
    }) ?? {}
  );
}

/** An address (IPv6 or IPv4 text, as the tree is) whose walk from the root follows `bits`. */
function addressOf(bits: Uint8Array, ipVersion: number): string {
  const word = (i: number, width: number) => bits.subarray(i, i + width).reduce((n, b) => n * 2 + b, 0);
  if (ipVersion === 4) return [0, 8, 16, 24].map((i) => word(i, 8)).join('.');
  return Array.from({ length: 8 }, (_, g) => word(g * 16, 16).toString(16)).join(':');
}

/** Reads one record of the original tree (node `n`, side 0 or 1) for its record size. */
function recordReader(db: Buffer, recordSize: number): (n: number, side: number) => number {
  const bytes = recordSize / 4;
  return (n, side) => {
    const at = n * bytes;
    if (recordSize === 24) return db.readUIntBE(at + side * 3, 3);
    if (recordSize === 32) return db.readUInt32BE(at + side * 4);
    const low = db.readUIntBE(at + side * 4, 3);
    return side === 0 ? ((db[at + 3] & 0xf0) << 20) | low : ((db[at + 3] & 0x0f) << 24) | low;
  };
}

/**
 * Rebuilds the search tree over the slim records: a node whose two halves now end in the same record becomes that
 * record, so networks that differed only in dropped fields merge. Shared subtrees (IPv4 aliases) stay shared.
 */
export function slimCityDatabase(db: Buffer): Buffer {
  const reader = new Reader<CityResponse>(db);
  const { nodeCount, recordSize, ipVersion, treeDepth } = reader.metadata;
  const read = recordReader(db, recordSize);
  const UNSEEN = -0x80000000;
  const EMPTY = -1; // results: node id >= 0 (post-order), EMPTY, or -2 - record index
  const memo = new Int32Array(nodeCount).fill(UNSEEN);
  const lefts = new Int32Array(nodeCount);
  const rights = new Int32Array(nodeCount);
  const recordOfOffset = new Map<number, number>();
  const recordOfKey = new Map<string, number>();
  const records: Record<string, MmdbValue>[] = [];
  const bits = new Uint8Array(treeDepth);
  let nodes = 0;

  const leaf = (value: number): number => {
    let i = recordOfOffset.get(value);
    if (i === undefined) {
      const slim = slimCityRecord(reader.get(addressOf(bits, ipVersion))!);
      const key = JSON.stringify(slim);
      i = recordOfKey.get(key) ?? records.push(slim) - 1;
      recordOfKey.set(key, i);
      recordOfOffset.set(value, i);
    }
    return -2 - i;
  };
  const visit = (value: number, depth: number): number => {
    if (value === nodeCount) return EMPTY;
    if (value > nodeCount) return leaf(value);
    if (memo[value] !== UNSEEN) return memo[value];
    bits[depth] = 0;
    const left = visit(read(value, 0), depth + 1);
    bits[depth] = 1;
    const right = visit(read(value, 1), depth + 1);
    bits[depth] = 0;
    if (left === right && left < 0) return (memo[value] = left);
    lefts[nodes] = left;
    rights[nodes] = right;
    return (memo[value] = nodes++);
  };
  const root = visit(0, 0);
  if (root < 0) {
    // A database of one record (or none) still needs a root node.
    lefts[0] = rights[0] = root;
    nodes = 1;
  }
  return write(reader.metadata, { lefts, rights, nodes }, records);
}

/** The slim file: post-order ids reversed so that the root is node 0, then the records and the original's metadata. */
function write(meta: Reader<CityResponse>['metadata'], tree: { lefts: Int32Array; rights: Int32Array; nodes: number }, records: Record<string, MmdbValue>[]): Buffer {
  const data = new DataSection();
  const offsets = records.map((r) => data.write(r));
  const n = tree.nodes;
  const size = recordSizeFor(n, data.bytes().length);
  const ref = (v: number) => (v >= 0 ? n - 1 - v : v === -1 ? n : n + 16 + offsets[-2 - v]);
  const out = Buffer.alloc((n * size) / 4);
  for (let id = 0; id < n; id++) writeNode(out, (n - 1 - id) * (size / 4), size, ref(tree.lefts[id]), ref(tree.rights[id]));
  return assemble(out, data.bytes(), {
    binary_format_major_version: new Uint(2, 2),
    binary_format_minor_version: new Uint(0, 2),
    build_epoch: new Uint(Math.round(meta.buildEpoch.getTime() / 1000), 8),
    database_type: meta.databaseType,
    description: { en: `${meta.description?.en ?? meta.databaseType}, English names and served fields only` },
    ip_version: new Uint(meta.ipVersion, 2),
    languages: ['en'],
    node_count: new Uint(n, 4),
    record_size: new Uint(size, 2),
  });
}
