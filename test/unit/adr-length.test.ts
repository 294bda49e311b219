// docs/adr: every decision record under 100 lines (the team's rule: a record is read whole, figures and all).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ADR_DIR = new URL('../../docs/adr/', import.meta.url);
const records = readdirSync(ADR_DIR).filter((name) => /^\d{4}-.*\.md$/.test(name));

describe('docs/adr', () => {
  it('holds the records', () => {
    expect(records.length).toBeGreaterThan(0);
  });

  it.each(records)('%s is under 100 lines', (name) => {
    const lines = readFileSync(new URL(name, ADR_DIR), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThan(100);
  });
});
