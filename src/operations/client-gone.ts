// A request's cancellation (Node's http.ServerResponse 'close' event): a signal aborted when the client closes the
// connection before its answer is written, for work that only this client waits for (SMTP sessions).
import type { ServerResponse } from 'node:http';

/** The signal of Koa's `ctx` (a handler's second argument); undefined when there is no response to watch (tests). */
export function clientGone(koa: unknown): AbortSignal | undefined {
  const res = (koa as { res?: ServerResponse } | undefined)?.res;
  if (!res || typeof res.once !== 'function') return undefined;
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
