// Password strength with a k-anonymity breach check (openapi.yaml checkPasswordStrength): the zxcvbn pool and the
// range client (the breached-password range API, or its mirror in PWNED_PASSWORDS_DIR).
import { resolverLookup } from '../adapters/dns/lookup.js';
import { requireDirectory } from '../adapters/files/startup-files.js';
import { createStrengthEstimator } from '../adapters/password/pool.js';
import { createRangeClient } from '../adapters/password/range-client.js';
import { createPasswordOperations } from '../operations/security.js';
import { defineCapability } from './capability.js';

export const password = defineCapability({
  name: 'password',
  config: ['passwordThreads', 'passwordMinThreads', 'passwordExtraLanguages', 'pwnedPasswordsDir', 'pwnedPasswordsUrl', 'pwnedTimeoutMs'],
  async start({ config, resolver, logger, metrics }) {
    const estimator = createStrengthEstimator({ threads: config.passwordThreads, minThreads: config.passwordMinThreads, extraLanguages: config.passwordExtraLanguages });
    // An absent mirror would answer "not breached" for every password: refuse it rather than mislead.
    if (config.pwnedPasswordsDir) await requireDirectory('PWNED_PASSWORDS_DIR', config.pwnedPasswordsDir);
    const ranges = createRangeClient({
      lookup: resolverLookup(resolver),
      baseUrl: config.pwnedPasswordsUrl,
      timeoutMs: config.pwnedTimeoutMs,
      mirrorDir: config.pwnedPasswordsDir ?? undefined,
      logger,
    });
    metrics.addCache('pwned_ranges', () => ranges.stats());
    return { handlers: createPasswordOperations({ estimator, ranges }), close: () => estimator.close() };
  },
});
