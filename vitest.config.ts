import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'clients/typescript/test/**/*.test.ts'],
    // The SDK's generated types (not committed) before any file imports the SDK.
    globalSetup: ['test/support/sdk-types.ts'],
    // Hang guards, not speed limits (speed is measured by make bench): sized for a starved machine, 2 cores at load
    // average 10+, where one test that starts processes or makes hundreds of requests takes several times its quiet
    // duration. A deadline inside a test (test/support/wait.ts) stays below these.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file in its own process (isolated: fake clocks, process.umask, V8's string table in spec-text).
    pool: 'forks',
    // A worker per core. Vitest's default for `run` is one fewer than the cores: a single worker on a 2-core machine,
    // which ran the files one after another although many spend their time waiting (child servers, Redis, timeouts).
    maxWorkers: '100%',
    tags: [
      {
        name: 'slow',
        description:
          'left out of `make test-fast` (a file tagged `// @module-tag slow` under its header comment): it starts processes or Redis, loads zxcvbn, makes many TLS handshakes, or needs a process of its own',
      },
    ],
  },
});
