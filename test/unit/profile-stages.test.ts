// bench/profile-stages.ts: a CPU profile's samples in a window, per request, by the stage that asked for the work.
import { describe, expect, it } from 'vitest';
import { groupProfile, type CpuProfile } from '../../bench/profile-stages.js';

const DIST = 'file:///srv/app/dist/src';

/** root -> (idle), (garbage collector), (program); root -> server.ts -> app.js -> reply-writer.js (writeReply -> _http_outgoing -> native write; newRequestId -> node:crypto), logging.js -> node:buffer. */
const profile = (samples: number[], deltas: number[]): CpuProfile => ({
  nodes: [
    { id: 1, callFrame: { functionName: '(root)', url: '' }, children: [2, 3, 4, 5, 12] },
    { id: 2, callFrame: { functionName: '(idle)', url: '' } },
    { id: 3, callFrame: { functionName: '(garbage collector)', url: '' } },
    { id: 4, callFrame: { functionName: '(program)', url: '' } },
    { id: 5, callFrame: { functionName: '', url: `${DIST}/server.js` }, children: [6] },
    { id: 6, callFrame: { functionName: '', url: `${DIST}/app.js` }, children: [7, 10, 13] },
    { id: 7, callFrame: { functionName: 'writeReply', url: `${DIST}/http/reply-writer.js` }, children: [8] },
    { id: 8, callFrame: { functionName: 'end', url: 'node:_http_outgoing' }, children: [9] },
    { id: 9, callFrame: { functionName: 'writeUtf8String', url: '' } },
    { id: 10, callFrame: { functionName: 'newRequestId', url: `${DIST}/http/reply-writer.js` }, children: [11] },
    { id: 11, callFrame: { functionName: 'randomUUID', url: 'node:internal/crypto/random' } },
    { id: 12, callFrame: { functionName: 'processTimers', url: 'node:internal/timers' } },
    { id: 13, callFrame: { functionName: 'write', url: `${DIST}/http/logging.js` }, children: [14] },
    { id: 14, callFrame: { functionName: 'from', url: 'node:buffer' } },
  ],
  startTime: 1000,
  endTime: 1000 + deltas.reduce((a, b) => a + b, 0),
  samples,
  timeDeltas: deltas,
});

describe('groupProfile', () => {
  it.each([
    ['Node HTTP owns the socket write, whoever called it', 9, 'Node HTTP and sockets (parser, writeHead, end, writes)'],
    ['a stage owns the other Node work it called', 11, 'request id'],
    ['the access log owns its Buffer.from', 14, 'access log'],
    ['our own frame', 6, 'app middleware (src/app.ts)'],
    ['Node alone', 12, 'Node, other (timers, events, no caller of ours)'],
    ['V8 garbage collection', 3, 'GC (main thread)'],
    ['native code V8 cannot place', 4, 'native, unattributed ("(program)")'],
  ])('%s', (_what, node, stage) => {
    // Three samples 10 us apart; each owns the time until the next one.
    const b = groupProfile(profile([node, node, node], [10, 10, 10]), 0, 2000, 2);
    expect([...b.stages.keys()]).toEqual([stage]);
    expect(b.stages.get(stage)).toBe(15);
    expect(b.busyUsPerReq).toBe(15);
  });

  it('counts only the samples inside the window, and never idle time', () => {
    // Samples at 1010 (idle), 1020 (app), 1030 (app), 1040 (GC, outside [1000, 1035)).
    const b = groupProfile(profile([2, 6, 6, 3], [10, 10, 10, 10]), 1000, 1035, 1);
    expect(b.samples).toBe(3);
    expect(Object.fromEntries(b.stages)).toEqual({ 'app middleware (src/app.ts)': 20 });
    expect(b.busyUsPerReq).toBe(20);
  });
});
