// Banking operations (openapi.yaml tag Banking): IBAN (ISO 13616) and BIC (ISO 9362) structure checks.
import { validateBic } from '../domain/bic.js';
import { validateIban, type BicLookup } from '../domain/iban.js';
import { invalidFormat } from '../errors.js';
import type { OperationHandler } from './types.js';

export interface BankingDeps {
  /** Bank code to BIC (adapters/bank-directory.ts resolveBic). */
  bicOf: BicLookup;
}

/** The validator guarantees a string of 1-64 characters; what is not an attempt at all is still a 400. */
const RULE = 'must be 1-64 letters, digits, spaces or dashes';

export function createBankingOperations(deps: BankingDeps): {
  validateIban: OperationHandler<'validateIban'>;
  validateBic: OperationHandler<'validateBic'>;
} {
  return {
    validateIban({ request }) {
      const result = validateIban(request.params.iban, deps.bicOf);
      if (!result) throw invalidFormat('iban', RULE);
      return { status: 200, body: result };
    },

    validateBic({ request }) {
      const result = validateBic(request.params.bic);
      if (!result) throw invalidFormat('bic', RULE);
      return { status: 200, body: result };
    },
  };
}
