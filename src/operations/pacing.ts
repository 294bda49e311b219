// Cooperative pacing of long request work (Node's event loop phases): bulk work yields to I/O once a turn is long.

/**
 * How long bulk work may hold the event loop before it lets I/O in. A GET /api/v1/bic answer takes about 0.03 ms of
 * CPU: a request arriving while a bulk works waits up to this long, so it bounds what a bulk adds to other requests'
 * latency (issue #55's target: BIC p99 within 20% beside the SMTP bulk bench; docs/adr/0036).
 */
const TURN_BUDGET_MS = 1;

let turnStarted = 0;
/** Callers waiting for a turn, first come first served. */
const waiting: Array<() => void> = [];
let scheduled = false;

/**
 * In a new turn, resume the waiters one at a time while the turn is short: each goes on in a microtask, and the next
 * is resumed in a microtask queued behind it, so the budget is read again after every waiter's step. The rest wait
 * for the next turn.
 */
function release(): void {
  if (waiting.length === 0) return;
  if (performance.now() - turnStarted >= TURN_BUDGET_MS) return schedule();
  waiting.shift()!();
  queueMicrotask(release);
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    turnStarted = performance.now();
    release();
  });
}

/**
 * Resolves at once (undefined: no await needed) while the current turn of the event loop is short and nobody waits;
 * otherwise in a later turn, after Node has polled for I/O. Shared by every caller in the process, and the waiters
 * resumed one by one: resuming all of a turn's waiters together (ten bulks' sixteen workers, or every verification
 * waiting on one DNS answer) would run each one's next step back to back as one long turn, whatever the budget.
 */
export function pace(): Promise<void> | undefined {
  if (waiting.length === 0 && performance.now() - turnStarted < TURN_BUDGET_MS) return undefined;
  const turn = new Promise<void>((resolve) => waiting.push(resolve));
  schedule();
  return turn;
}
