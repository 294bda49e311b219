// Account operation (openapi.yaml tag Account): GET /api/v1/usage, the caller's limits and usage per window; not counted.
import type { Limiter } from '../accounts/limits.js';
import { keyOf, type OperationHandler } from './types.js';

export interface AccountDeps {
  limiter: Pick<Limiter, 'peek'>;
}

/** Marked `x-counted: false` in openapi.yaml: the pipeline does not count it; its reply carries the same limit headers. */
export function createAccountOperations(deps: AccountDeps): { getUsage: OperationHandler<'getUsage'> } {
  return {
    async getUsage(context) {
      const key = keyOf(context);
      const { headers, usage } = await deps.limiter.peek(key);
      return { status: 200, body: { keyId: key.id, ...usage }, headers };
    },
  };
}
