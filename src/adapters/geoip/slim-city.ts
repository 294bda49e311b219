// A GeoIP2/GeoLite2 City database cut down to what geoip-reader returns (slim-city-record.ts), written as a MaxMind DB
// with networks that now share a record merged: the service holds this file in memory instead of the full one.
import { Reader, type CityResponse } from 'maxmind';
import { DataSection, Uint, type MmdbValue } from './mmdb-data.js';
import { addressOf, assemble, recordReader, recordSizeFor, writeNode } from './mmdb-tree.js';
import { slimCityRecord } from './slim-city-record.js';

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
  if (root < 0) [lefts[0], rights[0], nodes] = [root, root, 1]; // one record (or none) still needs a root node
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
    description: { en: `${meta.databaseType}, slim: English names and the fields geoip-reader serves` },
    ip_version: new Uint(meta.ipVersion, 2),
    languages: ['en'],
    node_count: new Uint(n, 4),
    record_size: new Uint(size, 2),
  });
}
