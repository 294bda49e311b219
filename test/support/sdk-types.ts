// Vitest's global setup: the SDK's types (clients/typescript/src/schema.ts, made by the SDK's own `generate` script and
// never committed) exist before a test file imports the SDK, made again when older than openapi.yaml, so that a bare
// `npm test` in a fresh clone runs as `make test` does (make has them as a prerequisite).
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCHEMA = join(ROOT, 'clients/typescript/src/schema.ts');

export default function makeSdkTypes(): void {
  if (existsSync(SCHEMA) && statSync(SCHEMA).mtimeMs >= statSync(join(ROOT, 'openapi.yaml')).mtimeMs) return;
  execFileSync('npm', ['--prefix', 'clients/typescript', 'run', 'generate'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
