// POST /api/v1/password/strength (INTERFACE.md 2.5): zxcvbn strength plus k-anonymity breach check.
import type { StrengthEstimator } from '../adapters/password-pool.js';
import type { RangeClient } from '../adapters/range-client.js';
import { breachCountFor, mergeBreach, sha1Parts, type PasswordResult } from '../domain/password.js';
import { invalidFormat, missingParameter } from '../http/errors.js';
import type { ApiRequest, Reply } from '../http/types.js';

export interface PasswordOperationsDeps {
  estimator: StrengthEstimator;
  ranges: RangeClient;
}

export type CheckPasswordStrengthRequest = ApiRequest<Record<string, string>, Record<string, string | undefined>, unknown>;

export function createPasswordOperations(deps: PasswordOperationsDeps): {
  checkPasswordStrength: (req: CheckPasswordStrengthRequest) => Promise<Reply<200, PasswordResult>>;
} {
  return {
    async checkPasswordStrength(req) {
      const body = req.body;
      const password =
        body !== null && typeof body === 'object' && !Array.isArray(body)
          ? (body as Record<string, unknown>).password
          : undefined;
      if (password === undefined) throw missingParameter('password');
      // Never echo the value: neither the message nor the details mention it.
      if (typeof password !== 'string' || password.length === 0) {
        throw invalidFormat('password', 'must be a non-empty string');
      }

      const { prefix, suffix } = sha1Parts(password);
      // Both run at once; if either fails the request fails (never a silent "not breached").
      const [strength, range] = await Promise.all([deps.estimator.estimate(password), deps.ranges.range(prefix)]);
      return { status: 200, body: mergeBreach(strength, breachCountFor(range, suffix)) };
    },
  };
}
