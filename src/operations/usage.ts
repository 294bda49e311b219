// GET /api/v1/usage: the caller's limits, usage and reset times per window (minute, UTC day, UTC month); not counted.
import type { KeyRecord } from '../adapters/key-store.js';
import type { Limiter } from '../accounts/limits.js';
import type { ApiRequest, Reply } from '../http/types.js';
import type { components } from '../../generated/api.js';

/** Operations the dispatcher must not count: it skips `limiter.consume` for them (the handler sends the headers). */
export const UNCOUNTED_OPERATIONS: ReadonlySet<string> = new Set(['getUsage']);

/** The contract's UsageResult (openapi.yaml is the source of truth). */
export type UsageResult = components['schemas']['UsageResult'];

export interface UsageDeps {
  limiter: Pick<Limiter, 'peek'>;
}

/**
 * The handler needs the authenticated key: the dispatcher puts it on the request as `key`.
 * Its reply carries the same limit headers as a counted request, computed without counting.
 */
export function usageHandler(limiter: UsageDeps['limiter']) {
  return async (req: ApiRequest & { key?: KeyRecord }): Promise<Reply<200, UsageResult>> => {
    if (!req.key) throw new Error('getUsage reached without an authenticated key on the request');
    const { headers, usage } = await limiter.peek(req.key);
    return { status: 200, body: { keyId: req.key.id, ...usage }, headers };
  };
}

export function createUsageOperations(deps: UsageDeps) {
  return { getUsage: usageHandler(deps.limiter) };
}
