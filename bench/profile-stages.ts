// A V8 .cpuprofile's self time in a time window, grouped by the stage of a request that spent it (bench/profile.ts).
//
// A sample belongs to the nearest frame of its stack, from the leaf, that is either Node's HTTP and socket machinery
// (node:_http_*, node:net, streams: whoever called it, so the service and the peer are charged alike for writing an
// answer) or the service's code or a package: the stage that asked owns the other Node work it called (the key
// lookup its SHA-256, the request id its randomUUID, the access log its Date.now). Samples with neither are Node's
// own (the HTTP parser's callbacks, timers), V8's garbage collector, or native code V8 cannot place ("(program)").
// The profiler's sample intervals are wall time on the main thread (they include time the thread waited for a core),
// so bench/profile.ts scales the stages to the main thread's CPU time read from /proc.

export interface CallFrame {
  functionName: string;
  url: string;
}
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Each stage of a request: its row in the report (the order one meets them) and the pattern on the script URL of its
 * frames, tried in this order, the first match wins (null: placed by ownStage or leafStage).
 */
const STAGE_LIST: Array<[string, number, RegExp | null]> = [
  ['app middleware (src/app.ts)', 4, /\/src\/app\.[jt]s$/],
  ['server (src/server.ts)', 2, /\/src\/server\.[jt]s$/],
  ['hooks (src/http/api.ts)', 8, /\/src\/http\/api\.[jt]s$/],
  ['routing (src/http/openapi-router.ts)', 7, /\/src\/http\/openapi-router\.[jt]s$/],
  ['request validation (Ajv)', 11, /\/src\/http\/request-validator\.[jt]s$|\/node_modules\/(ajv|ajv-formats|fast-uri)\//],
  ['openapi-backend handleRequest', 6, /\/node_modules\/openapi-backend\//],
  ['key lookup', 9, /\/src\/accounts\/key-directory\.[jt]s$|\/src\/adapters\/keys\/|\/node_modules\/lru-cache\//],
  ['limiter', 10, /\/src\/accounts\/limit|\/src\/adapters\/limits\/|\/src\/domain\/utc-windows|\/node_modules\/(rate-limiter-flexible|@fastify\/rate-limit|toad-cache)\//],
  ['body reading', 12, /\/src\/http\/json-body|\/node_modules\/(koa-body|co-body|raw-body|inflation|iconv-lite|bytes)\//],
  ['handler (operation, domain)', 13, /\/src\/operations\/|\/src\/domain\//],
  ['errors', 14, /\/src\/errors\.[jt]s$|\/src\/error-answers\.[jt]s$/],
  ['reply writing', 15, /\/src\/http\/reply-writer\.[jt]s$/],
  ['access log', 16, /\/src\/http\/logging\.[jt]s$|\/src\/adapters\/logging\/|\/node_modules\/(pino|sonic-boom|pino-std-serializers|fast-redact|@pinojs\/[^/]+|quick-format-unescaped|atomic-sleep|thread-stream|on-exit-leak-free|safe-stable-stringify)\//],
  ['metrics', 17, /\/src\/http\/metrics\.[jt]s$|\/node_modules\/(prom-client|tdigest|bintrees)\//],
  ['Koa', 3, /\/node_modules\/(koa|koa-compose|@koa\/router|on-finished|ee-first|statuses|delegates|http-errors|http-assert|parseurl|only|encodeurl|vary|content-type|content-disposition|type-is|media-typer|mime-types|mime-db|accepts|negotiator|cookies|keygrip|fresh|escape-html|destroy|depd|setprototypeof|toidentifier|inherits|path-to-regexp)\//],
  ['Fastify (fastify, find-my-way, its serialisers)', 18, /\/node_modules\/(fastify|find-my-way|avvio|fast-json-stringify|@fastify\/[^/]+|fast-querystring|fast-decode-uri-component|light-my-request|process-warning|abstract-logging|rfdc|secure-json-parse|ret|safe-regex2|json-schema-ref-resolver|fastify-plugin|fastify-openapi-glue)\//],
  ['peer hooks and handler (bench/fastify-peer.ts)', 19, /\/bench\/fastify-peer\.ts$/],
  ['Node HTTP and sockets (parser, writeHead, end, writes)', 0, null],
  ['Node, other (timers, events, no caller of ours)', 1, null],
  ['request id', 5, null],
  ['GC (main thread)', 20, null],
  ['native, unattributed ("(program)")', 21, null],
  ['other', 22, null],
];
export const STAGES = [...STAGE_LIST].sort((a, b) => a[1] - b[1]).map(([stage]) => stage);

/** The stage of a frame that is the service's code or a package; null for Node internals and native frames. */
const NODE_HTTP = /^node:(_http_|net$|stream$|_stream_|internal\/streams\/|internal\/http|internal\/stream_base_commons|internal\/net)/;

function ownStage(f: CallFrame): string | null {
  const url = f.url;
  if (NODE_HTTP.test(url)) return 'Node HTTP and sockets (parser, writeHead, end, writes)';
  if (url === '' || url.startsWith('node:')) return null;
  if (/\/src\/http\/reply-writer\.[jt]s$/.test(url) && f.functionName === 'newRequestId') return 'request id';
  for (const [stage, , re] of STAGE_LIST) if (re?.test(url)) return stage;
  return 'other';
}

/** Where a sample's leaf has no caller of ours: by the leaf itself. */
function leafStage(f: CallFrame): string | null {
  if (f.functionName === '(idle)') return null;
  if (f.functionName === '(garbage collector)') return 'GC (main thread)';
  if (f.functionName === '(program)' || f.functionName === '(root)') return 'native, unattributed ("(program)")';
  return 'Node, other (timers, events, no caller of ours)';
}

/** A budget, and once bench/profile.ts has scaled it to CPU time, the busy samples' wall time per request before. */
export type Budget = ReturnType<typeof groupProfile> & { wallUsPerReq?: number };

/**
 * Group the samples taken in [t0, t1) (CLOCK_MONOTONIC microseconds) per request of `requests`: stage -> microseconds of
 * main-thread time, every non-idle microsecond (busyUsPerReq), the samples inside the window, and "stage: function
 * file" of the sampled leaf frames -> microseconds (`leaves`, PROFILE_TOP prints the largest); all per request.
 */
export function groupProfile(profile: CpuProfile, t0: number, t1: number, requests: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string | null>();
  /** The stage of the nearest own frame from this node to the root; null when there is none. */
  const ownUp = (id: number): string | null => {
    if (memo.has(id)) return memo.get(id)!;
    const n = byId.get(id)!;
    const p = parent.get(id);
    const s = ownStage(n.callFrame) ?? (p === undefined ? null : ownUp(p));
    memo.set(id, s);
    return s;
  };
  const totals = new Map<string, number>();
  const leaves = new Map<string, number>();
  let busy = 0;
  let samples = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (t < t0 || t >= t1) continue;
    // The time until the next sample is this sample's (the last one gets the mean interval).
    const dt = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1] : (profile.endTime - profile.startTime) / profile.samples.length;
    const node = byId.get(profile.samples[i])!;
    const stage = ownUp(node.id) ?? leafStage(node.callFrame);
    samples++;
    if (stage === null) continue;
    busy += dt;
    totals.set(stage, (totals.get(stage) ?? 0) + dt);
    const f = node.callFrame;
    const leaf = `${stage}: ${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules\/)?/, '')}`;
    leaves.set(leaf, (leaves.get(leaf) ?? 0) + dt);
  }
  const perRequest = (m: Map<string, number>) => new Map([...m].map(([k, v]) => [k, v / requests]));
  return { stages: perRequest(totals), busyUsPerReq: busy / requests, samples, leaves: perRequest(leaves) };
}
