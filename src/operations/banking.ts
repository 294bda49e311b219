// Banking operations (openapi.yaml tag Banking): IBAN (ISO 13616) and BIC (ISO 9362) structure checks.
import { validateBic } from '../domain/bic.js';
import { validateIban, type BicLookup } from '../domain/iban.js';
import type { OperationHandler } from './types.js';

export interface BankingDeps {
  /** Bank code to BIC (adapters/bank-data/bank-directory.ts resolveBic). */
  bicOf: BicLookup;
}

export function createBankingOperations(deps: BankingDeps): {
  validateIban: OperationHandler<'validateIban'>;
  validateBic: OperationHandler<'validateBic'>;
} {
  return {
    /** The validator admits 1-64 letters, digits, spaces and dashes with one letter or digit (openapi.yaml Iban). */
    validateIban({ request }) {
      return { status: 200, body: validateIban(request.params.iban, deps.bicOf) };
    },

    /** The validator admits what it admits for an IBAN (openapi.yaml Bic). */
    validateBic({ request }) {
      return { status: 200, body: validateBic(request.params.bic) };
    },
  };
}
