// openapi.yaml's text (YAML 1.2 in UTF-8) stays within Latin-1, so that V8 keeps every string parsed from it at one byte
// per character. One character above U+00FF (a single em dash in info.description did it) makes V8 hold the whole text,
// and every name sliced from it, at two bytes per character: the response field names and the limit header names then
// shared those two-byte strings, and writing headers, JSON and log lines took V8's and ICU's slow paths (card answers
// cost 101 instead of 90 us of CPU each, measured alternately).
// @module-tag slow (left out of make test-fast): needs a process of its own (files sharing one intern V8's strings first)
import { readFileSync } from 'node:fs';
import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { load } from 'js-yaml';
import { loadSpec, projectPath } from '../../src/http/spec.js';

/** V8's serializer tags a string by how V8 holds it: '"' one byte per character, 'c' two (after an optional pad byte). */
function twoByte(s: string): boolean {
  const b = serialize(s);
  return b[2] === 0x63 || (b[2] === 0x00 && b[3] === 0x63);
}

function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out);
    }
  }
  return out;
}

describe('openapi.yaml text', () => {
  it('has no character above U+00FF', () => {
    const text = readFileSync(projectPath('openapi.yaml'), 'utf8');
    const offending = text.split('\n').flatMap((line, i) => (/[^\x00-\xff]/.test(line) ? [`line ${i + 1}: ${line.trim()}`] : []));
    expect(offending).toEqual([]);
  });

  it('parses into names and texts held at one byte per character', async () => {
    const { document } = await loadSpec();
    const strings = stringsOf(document);
    expect(strings.length).toBeGreaterThan(1000);
    expect(strings.filter(twoByte)).toEqual([]);
  });

  it('holds no value that a YAML 1.1 reader (js-yaml default schema) reads otherwise than YAML 1.2 (timestamps, yes/no)', async () => {
    const { document, yaml } = await loadSpec();
    expect(document).toStrictEqual(load(yaml));
  });

  it('the check above tells a name sliced from a text with an em dash', () => {
    // (A name not in openapi.yaml: V8 shares equal names, so a two-byte copy parsed above would be found here.)
    const text = 'Sample \u2014 field: X-Sample-Field-Name';
    expect(twoByte(text.slice(text.indexOf('X-Sample')))).toBe(true);
    expect(twoByte('X-Sample-Field-Name')).toBe(false);
  });
});
