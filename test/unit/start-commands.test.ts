// Every shipped start command runs the server with the same node flags and malloc settings (docs/adr/0034, 0039).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NODE_START_ENV, NODE_START_FLAGS } from '../../src/heap-tuning.js';

const read = (path: string): string => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };

/** Each start command: where it is written, its text, and its node arguments before the entry point. */
const COMMANDS: Array<[string, string]> = [
  ['package.json scripts.start', pkg.scripts.start],
  ['Makefile run', /^run:.*\n\t(.+)$/m.exec(read('Makefile'))?.[1] ?? ''],
  ['Containerfile CMD', (/^CMD \[(.+)\]$/m.exec(read('Containerfile'))?.[1] ?? '').replace(/[",]/g, ' ')],
  ['docs/deploy.md systemd unit', /^ExecStart=(.+)$/m.exec(read('docs/deploy.md'))?.[1] ?? ''],
];
const nodeArgs = (command: string): string[] => /(?:^|\s)node\s+(.*?)\s*dist\/src\/main\.js/.exec(command)?.[1].split(/\s+/).filter(Boolean) ?? [];

describe('start commands', () => {
  it.each(COMMANDS)('%s starts dist/src/main.js with NODE_START_FLAGS', (_where, command) => {
    expect(command).toContain('dist/src/main.js');
    expect(nodeArgs(command)).toEqual([...NODE_START_FLAGS]);
  });

  // The image's ENV is the runtime stage's (the build stage has one of its own).
  it.each(Object.entries(NODE_START_ENV))('set %s=%s wherever they start the server', (name, value) => {
    expect(pkg.scripts.start).toContain(`${name}=\${${name}:-${value}} `);
    expect(/^run:.*\n\t(.+)$/m.exec(read('Makefile'))?.[1]).toContain(`${name}=$\${${name}:-${value}} `);
    expect(/^ENV NODE_ENV=(?:.*\\\n)*.*$/m.exec(read('Containerfile'))?.[0].split(/\s+/)).toContain(`${name}=${value}`);
    expect(read('docs/deploy.md')).toContain(`\nEnvironment=${name}=${value}\n`);
  });
});
