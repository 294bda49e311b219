// BIC validation operation (ISO 9362): plausible input gets a verdict, anything else 400 INVALID_FORMAT.
import { validateBic } from '../domain/bic.js';
import { invalidFormat } from '../http/errors.js';
import type { OperationHandler } from '../http/types.js';

export function createBicOperations(): { validateBic: OperationHandler<'validateBic'> } {
  return {
    validateBic(req) {
      const result = validateBic(req.params.bic);
      if (!result) throw invalidFormat('bic', 'must be 1-64 letters, digits, spaces or dashes');
      return { status: 200, body: result };
    },
  };
}
