// HTTP handlers for IBAN validation (ISO 13616) and card-number validation (Luhn, BIN); pure CPU, no I/O.
import { invalidFormat, missingParameter } from '../http/errors.js';
import type { ApiRequest, Reply } from '../http/types.js';
import type { BinTable } from '../adapters/bin-table.js';
import { validateCard as validateCardNumber, type CardResult } from '../domain/card.js';
import { validateIban as validateIbanValue, type BicLookup, type IbanResult } from '../domain/iban.js';

export interface IbanCardDeps {
  bin: BinTable;
  /** Bank code to BIC (adapters/bank-directory.ts resolveBic). */
  bicOf: BicLookup;
}

export type ValidateIbanRequest = ApiRequest<{ iban?: unknown }>;
export type ValidateCardRequest = ApiRequest<Record<string, string>, Record<string, string | undefined>, unknown>;

const IBAN_RULE = 'must be 1-64 letters, digits, spaces or dashes';
/** Never carries the submitted value: card numbers are not echoed anywhere. */
const CARD_RULE = 'must be a string of at most 64 characters containing digits';

export function createIbanCardOperations(deps: IbanCardDeps) {
  const { bin, bicOf } = deps;
  return {
    validateIban(req: ValidateIbanRequest): Reply<200, IbanResult> {
      const value = req.params?.iban;
      if (value === undefined || value === null) throw missingParameter('iban');
      const result = typeof value === 'string' ? validateIbanValue(value, bicOf) : null;
      if (!result) throw invalidFormat('iban', IBAN_RULE);
      return { status: 200, body: result };
    },

    validateCard(req: ValidateCardRequest): Reply<200, CardResult> {
      const body = req.body;
      const value =
        body !== null && typeof body === 'object' ? (body as Record<string, unknown>).cardNumber : undefined;
      if (value === undefined || value === null) throw missingParameter('cardNumber');
      const result = typeof value === 'string' ? validateCardNumber(value, bin) : null;
      if (!result) throw invalidFormat('cardNumber', CARD_RULE);
      return { status: 200, body: result };
    },
  };
}

export type IbanCardOperations = ReturnType<typeof createIbanCardOperations>;
