// Cooperative pacing of long request work (Node's event loop phases): bulk work yields to I/O once a turn is long.

/**
 * How long bulk work may hold the event loop before it lets I/O in. A GET /api/v1/bic answer takes about 0.03 ms of
 * CPU: a request arriving while a bulk works waits up to this long, so it bounds what a bulk adds to other requests'
 * latency (issue #55's target: BIC p99 within 20% beside the SMTP bulk bench; docs/adr/0036).
 */
const TURN_BUDGET_MS = 1;

let turnStarted = 0;
let nextTurn: Promise<void> | null = null;

/**
 * Resolves at once (undefined: no await needed) while the current turn of the event loop is short; otherwise with a
 * later turn, after Node has polled for I/O. Shared by every caller in the process: a yield per caller (setImmediate
 * in each of ten bulks' sixteen workers) would queue 160 continuations that Node's check phase then runs back to back
 * as one long turn, whereas here they all wait for one immediate and each goes on only while the new turn is short.
 */
export function pace(): Promise<void> | undefined {
  if (performance.now() - turnStarted < TURN_BUDGET_MS) return undefined;
  nextTurn ??= new Promise((resolve) =>
    setImmediate(() => {
      nextTurn = null;
      turnStarted = performance.now();
      resolve();
    }),
  );
  return nextTurn;
}
