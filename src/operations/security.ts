// Security operations (openapi.yaml tag Security): password strength with a k-anonymity breach check, card numbers (ISO/IEC 7812).
import type { BinTable } from '../adapters/bank-data/bin-table.js';
import type { StrengthEstimator } from '../adapters/password/pool.js';
import type { RangeClient } from '../adapters/password/range-client.js';
import { validateCard } from '../domain/card.js';
import { breachCountFor, mergeBreach, sha1Parts } from '../domain/password.js';
import type { OperationHandler } from './types.js';

export interface PasswordDeps {
  estimator: StrengthEstimator;
  ranges: RangeClient;
}

export interface CardDeps {
  /** The BIN table in use: read once per request (a reload swaps it whole). */
  bin: () => BinTable;
}

export function createPasswordOperations(deps: PasswordDeps): { checkPasswordStrength: OperationHandler<'checkPasswordStrength'> } {
  return {
    /** The validator guarantees a non-empty string; the value is never echoed, logged or stored. */
    async checkPasswordStrength({ request }) {
      const { password } = request.requestBody;
      const { prefix, suffix } = sha1Parts(password);
      // Both run at once; if either fails the request fails (never a silent "not breached").
      const [strength, range] = await Promise.all([deps.estimator.estimate(password), deps.ranges.range(prefix)]);
      return { status: 200, body: mergeBreach(strength, breachCountFor(range, suffix)) };
    },
  };
}

export function createCardOperations(deps: CardDeps): { validateCard: OperationHandler<'validateCard'> } {
  return {
    /** The validator admits 1-64 characters with a digit (openapi.yaml CardValidationRequest); only the last four come back. */
    validateCard({ request }) {
      return { status: 200, body: validateCard(request.requestBody.cardNumber, deps.bin()) };
    },
  };
}
