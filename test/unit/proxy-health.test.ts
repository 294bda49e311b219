// SMTP_PROXY's health as sessions find it (src/adapters/smtp/proxy-health.ts): one warning a minute while it fails,
// /readyz's degraded text, cleared by the first session the proxy carries again.
import { describe, expect, it } from 'vitest';
import { createProxyHealth } from '../../src/adapters/smtp/proxy-health.js';
import type { SessionOutcome, SmtpSessionOptions } from '../../src/adapters/smtp/smtp-client.js';

const DOWN: SessionOutcome = { kind: 'unreachable', cause: 'proxy', detail: 'connect ECONNREFUSED 127.0.0.1:1080' };
const REFUSED_BEYOND: SessionOutcome = { kind: 'unreachable', cause: 'refused' };

function setup() {
  const clock = { t: Date.UTC(2026, 10, 29, 8, 0, 0) };
  const warnings: object[] = [];
  const health = createProxyHealth({ proxy: { host: '127.0.0.1', port: 1080 }, logger: { warn: (obj) => warnings.push(obj) }, now: () => clock.t });
  let next: SessionOutcome = DOWN;
  const run = health.watch(async () => next);
  const session = (outcome: SessionOutcome) => {
    next = outcome;
    return run({} as SmtpSessionOptions);
  };
  return { clock, warnings, health, session };
}

describe('proxy health', () => {
  it('warns once a minute while the proxy fails, naming the proxy and its error', async () => {
    const { clock, warnings, session } = setup();
    for (let i = 0; i < 5; i++) expect(await session(DOWN)).toBe(DOWN);
    expect(warnings).toEqual([{ proxy: '127.0.0.1:1080', error: 'connect ECONNREFUSED 127.0.0.1:1080', failingSince: '2026-11-29T08:00:00.000Z' }]);
    clock.t += 59_999;
    await session(DOWN);
    expect(warnings).toHaveLength(1);
    clock.t += 1;
    await session(DOWN);
    expect(warnings).toHaveLength(2);
  });

  it('says since when in degraded, and forgets it once the proxy carries a session (a refusal beyond it included)', async () => {
    const { clock, health, session } = setup();
    expect(health.degraded()).toBeNull();
    await session(DOWN);
    clock.t += 30_000;
    await session(DOWN);
    expect(health.degraded()).toBe('SMTP_PROXY 127.0.0.1:1080 failing since 2026-11-29T08:00:00.000Z: connect ECONNREFUSED 127.0.0.1:1080; SMTP verifications answer proxy_failed');
    await session(REFUSED_BEYOND);
    expect(health.degraded()).toBeNull();
  });
});
