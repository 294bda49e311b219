// The client's own test run (the root config includes the same files): `npx vitest run --config clients/typescript/vitest.config.ts`.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['clients/typescript/test/**/*.test.ts'],
    globalSetup: ['test/support/sdk-types.ts'],
    testTimeout: 15_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
