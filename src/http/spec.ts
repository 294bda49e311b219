// The contract the server runs on: openapi.yaml read once at start-up (OpenAPI 3.1).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, load } from 'js-yaml';

export interface Spec {
  /** The parsed document (never mutated: openapi-backend gets its own copy). */
  document: Record<string, any>;
  yaml: string;
  json: string;
}

/** A path under the project root, whether running from src/ (tsx) or dist/src/ (compiled). */
export function projectPath(relative: string): string {
  const here = fileURLToPath(import.meta.url);
  const marker = here.includes('/dist/src/') ? '/dist/src/' : '/src/';
  return here.slice(0, here.lastIndexOf(marker)) + '/' + relative;
}

/**
 * Parsed by js-yaml with the YAML 1.2 core schema (no timestamps, no YAML 1.1 booleans): several times faster
 * than the `yaml` package, which was the largest single step of the start-up (docs/adr/0012-keys-on-demand.md);
 * test/unit/spec-text.test.ts checks that both parsers read the same document.
 */
export async function loadSpec(path = projectPath('openapi.yaml')): Promise<Spec> {
  const yaml = await readFile(path, 'utf8');
  const document = load(yaml, { schema: CORE_SCHEMA }) as Record<string, any>;
  return { document, yaml, json: JSON.stringify(document) };
}
