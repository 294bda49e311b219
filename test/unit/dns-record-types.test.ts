// lookupDns's `type` parameter and DnsRecord.type in openapi.yaml: the types a request may ask for are the types a record may carry (issue #43, item 2).
import { beforeAll, describe, expect, it } from 'vitest';
import { RECORD_TYPES } from '../../src/domain/dns-query.js';
import { loadSpec } from '../../src/http/spec.js';

let typeParameter: { pattern: string; 'x-invalid-message': string };
let typeDescription: string;
let recordTypes: string[];

beforeAll(async () => {
  const doc = (await loadSpec()).document as Record<string, any>;
  const param = doc.paths['/api/v1/dns/{domain}'].get.parameters.find((p: any) => p.name === 'type' && p.in === 'query');
  typeParameter = param.schema;
  typeDescription = param.description;
  recordTypes = doc.components.schemas.DnsRecord.properties.type.enum;
});

/**
 * The record types the pattern's alternation spells, one letter class per letter (`[Cc][Aa][Aa]`, `[Aa]{4}`): read from
 * the first `(?:...)` group, so a type added to or left out of the pattern shows here.
 */
function typesOfPattern(pattern: string): string[] {
  const group = /\(\?:([^()]*)\)/.exec(pattern);
  if (!group) throw new Error(`no alternation group in ${pattern}`);
  return group[1].split('|').map((alt) => {
    const letters = /^(?:\[([A-Z])([a-z])\](?:\{(\d+)\})?)+$/.test(alt) ? [...alt.matchAll(/\[([A-Z])([a-z])\](?:\{(\d+)\})?/g)] : null;
    if (!letters) throw new Error(`unexpected alternative ${alt}`);
    return letters.map((m) => m[1].repeat(Number(m[3] ?? 1))).join('');
  });
}

describe('lookupDns type and DnsRecord.type', () => {
  it('the parameter accepts exactly the types a record can carry', () => {
    expect(typesOfPattern(typeParameter.pattern).sort()).toEqual([...recordTypes].sort());
  });

  it('the service looks up the same types', () => {
    expect([...RECORD_TYPES].sort()).toEqual([...recordTypes].sort());
  });

  it('the pattern takes each type alone, in any case, and all of them in one list; it refuses others', () => {
    const pattern = new RegExp(typeParameter.pattern, 'u');
    for (const t of recordTypes) {
      expect(pattern.test(t), t).toBe(true);
      expect(pattern.test(t.toLowerCase()), t).toBe(true);
    }
    expect(pattern.test(recordTypes.join(' , '))).toBe(true);
    for (const t of ['PTR', 'SRV', 'DS', 'ANY', 'CAAA', 'A,']) expect(pattern.test(t), t).toBe(false);
  });

  it('the refusal message and the description list the same types, in the order of the enum', () => {
    expect(typeParameter['x-invalid-message']).toContain(recordTypes.join(', '));
    expect(typeDescription.replace(/\s+/g, ' ')).toContain(`${recordTypes.slice(0, -1).join(', ')} and ${recordTypes.at(-1)}`);
  });
});
