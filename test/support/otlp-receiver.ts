// A real OTLP/HTTP trace receiver on loopback (POST /v1/traces, application/x-protobuf, gzip or not): keeps every
// request's raw bytes and decodes the spans (OTLP trace.proto field numbers) with a minimal protobuf wire reader.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  /** Status code: 0 unset, 1 ok, 2 error. */
  status: number;
  resource: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The base URL to give OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Every request body as received (decompressed), in order. */
  bodies: Buffer[];
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

type Field = { no: number; wire: number; value: bigint | Buffer };

/** The fields of one protobuf message (wire types 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) out.push({ no, wire, value: (i += 8, buf.readBigUInt64LE(i - 8)) });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, value: buf.subarray(i, (i += len)) });
    } else if (wire === 5) out.push({ no, wire, value: BigInt((i += 4, buf.readUInt32LE(i - 4))) });
    else throw new Error(`protobuf wire type ${wire} not expected in OTLP traces`);
  }
  return out;
}
const bytes = (f: Field) => f.value as Buffer;

/** KeyValue { 1 key, 2 AnyValue { 1 string, 2 bool, 3 int, 4 double, ... } } */
function keyValues(list: Field[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = fields(bytes(kv));
    const key = bytes(f.find((x) => x.no === 1)!).toString('utf8');
    const any = f.find((x) => x.no === 2);
    if (!any) continue;
    const v = fields(bytes(any))[0];
    if (!v) continue;
    if (v.no === 1) out[key] = bytes(v).toString('utf8');
    else if (v.no === 2) out[key] = v.value === 1n;
    else if (v.no === 3) out[key] = Number(BigInt.asIntN(64, v.value as bigint));
    else if (v.no === 4) out[key] = Buffer.from((v.value as bigint).toString(16).padStart(16, '0'), 'hex').readDoubleBE();
    else out[key] = `(AnyValue field ${v.no})`;
  }
  return out;
}

/** ExportTraceServiceRequest { 1 ResourceSpans { 1 Resource { 1 attributes }, 2 ScopeSpans { 2 Span } } } */
export function decodeTraces(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of fields(body).filter((f) => f.no === 1)) {
    const rsf = fields(bytes(rs));
    const resourceField = rsf.find((f) => f.no === 1);
    const resource = resourceField ? keyValues(fields(bytes(resourceField)).filter((f) => f.no === 1)) : {};
    for (const ss of rsf.filter((f) => f.no === 2)) {
      for (const sp of fields(bytes(ss)).filter((f) => f.no === 2)) {
        const s = fields(bytes(sp));
        const one = (no: number) => s.find((f) => f.no === no);
        const hex = (no: number) => (one(no) ? bytes(one(no)!).toString('hex') : '');
        const status = one(15) ? fields(bytes(one(15)!)).find((f) => f.no === 3) : undefined;
        spans.push({
          traceId: hex(1),
          spanId: hex(2),
          parentSpanId: hex(4),
          name: bytes(one(5)!).toString('utf8'),
          kind: Number(one(6)?.value ?? 0n),
          startNs: (one(7)?.value as bigint) ?? 0n,
          endNs: (one(8)?.value as bigint) ?? 0n,
          attributes: keyValues(s.filter((f) => f.no === 9)),
          status: Number(status?.value ?? 0n),
          resource,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: Buffer[] = [];
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(parts);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      bodies.push(body);
      try {
        if (req.headers['content-type'] !== 'application/x-protobuf') throw new Error(`content-type ${req.headers['content-type']}`);
        spans.push(...decodeTraces(body));
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        return;
      }
      // An empty ExportTraceServiceResponse: full success.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
