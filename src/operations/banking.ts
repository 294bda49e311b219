// Banking operations (openapi.yaml tag Banking): IBAN (ISO 13616) and BIC (ISO 9362) structure checks.
import { validateBic, type BicDirectoryLookup } from '../domain/bic.js';
import { validateIban } from '../domain/iban.js';
import { germanCheckMethod } from '../domain/iban-national.js';
import { keptLookups, type BankCodeLookups } from '../adapters/bank-data/kept-lookups.js';
import type { OperationHandler } from './types.js';

/** The bank directory in use (adapters/bank-data/bank-directory.ts): one object per load, swapped whole on a reload. */
interface BankLookups extends BankCodeLookups {
  bicEntry: BicDirectoryLookup;
}

export interface BankingDeps {
  /** The directory at the time of the call: each request reads it once and answers from that one. */
  banks: () => BankLookups;
}

export function createBankingOperations(deps: BankingDeps): {
  validateIban: OperationHandler<'validateIban'>;
  validateBic: OperationHandler<'validateBic'>;
} {
  return {
    /** The validator admits 1-64 letters, digits, spaces and dashes with one letter or digit (openapi.yaml Iban). */
    validateIban({ request }) {
      // A bank code's BIC and name are asked of the directory once a minute (adapters/bank-data, ADR 0040).
      const kept = keptLookups(deps.banks());
      return { status: 200, body: validateIban(request.params.iban, kept.bicOf, germanCheckMethod, kept.nameOf) };
    },

    /** The validator admits what it admits for an IBAN (openapi.yaml Bic). */
    validateBic({ request }) {
      return { status: 200, body: validateBic(request.params.bic, deps.banks().bicEntry) };
    },
  };
}
