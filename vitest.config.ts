import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'clients/typescript/test/**/*.test.ts'],
    testTimeout: 15_000,
    hookTimeout: 30_000,
    // Each file in its own process (isolated: fake clocks, process.umask, V8's string table in spec-text).
    pool: 'forks',
    // A worker per core. Vitest's default for `run` is one fewer than the cores: a single worker on a 2-core machine,
    // which ran the files one after another although many spend their time waiting (child servers, Redis, timeouts).
    maxWorkers: '100%',
  },
});
