// A job's charge at submission (src/operations/jobs.ts): every item against the daily and monthly quotas, then with
// smtp the distinct addresses against the SMTP quota (issue #55's consumeSmtp); a refusal anywhere charges nothing
// and queues nothing; a store that cannot take the job gives the quota back.
import { describe, expect, it, vi } from 'vitest';
import type { KeyRecord } from '../../src/adapters/keys/key-store.js';
import { JobStoreUnavailable, type JobStore } from '../../src/adapters/jobs/job-store.js';
import { ApiError } from '../../src/errors.js';
import { createJobsOperations } from '../../src/operations/jobs.js';
import type { OperationContext } from '../../src/operations/types.js';

const key = { id: 'key_1' } as KeyRecord;
const view = { id: 'job_x', keyId: 'key_1', status: 'queued', smtp: true, total: 3, distinct: 2, processed: 0, counts: { deliverable: 0, undeliverable: 0, risky: 0, unknown: 0, not_checked: 0 }, retriesPending: 0, createdAt: 0, startedAt: null, finishedAt: null, expiresAt: 1, webhookUrl: null };
const request = (items: string[], smtp: boolean) =>
  ({ request: { params: {}, query: {}, requestBody: { items, smtp }, headers: {}, ip: '' }, security: { ApiKey: key } }) as unknown as OperationContext<'createEmailJob'>;

function setup(opts: { smtpRefuses?: boolean; storeFails?: boolean; withSmtpQuota?: boolean } = {}) {
  const limiter = {
    chargeQuota: vi.fn(async () => ({ headers: { 'X-Quota-Daily-Remaining': '7' } })),
    refundQuota: vi.fn(async () => {}),
    ...(opts.withSmtpQuota === false
      ? {}
      : { consumeSmtp: vi.fn(async () => (opts.smtpRefuses ? Promise.reject(new ApiError(429, 'DAILY_QUOTA_EXCEEDED', 'smtp quota')) : { limit: 10, remaining: 8 })) }),
  };
  const create = vi.fn(async () => (opts.storeFails ? Promise.reject(new JobStoreUnavailable('down', 5)) : view));
  const ops = createJobsOperations({ store: { create } as unknown as JobStore, limiter, maxItems: 10, retentionHours: 1 });
  return { ops, limiter, create };
}

describe('charging a job at submission', () => {
  it('charges every item to the quotas and the distinct addresses to the SMTP quota', async () => {
    const { ops, limiter, create } = setup();
    const res = await ops.createEmailJob(request(['a@x.test', 'b@x.test', 'a@x.test'], true));
    expect(res.status).toBe(202);
    expect(limiter.chargeQuota).toHaveBeenCalledWith(key, 3);
    expect(limiter.consumeSmtp).toHaveBeenCalledWith(key, 2);
    expect(create).toHaveBeenCalledOnce();
  });

  it('charges no SMTP quota for a job without smtp, nor where the server has none', async () => {
    const plain = setup();
    await plain.ops.createEmailJob(request(['a@x.test'], false));
    expect(plain.limiter.consumeSmtp).not.toHaveBeenCalled();
    const without = setup({ withSmtpQuota: false });
    expect((await without.ops.createEmailJob(request(['a@x.test'], true))).status).toBe(202);
  });

  it('an SMTP quota refusal refuses the job whole: the quotas given back, nothing queued', async () => {
    const { ops, limiter, create } = setup({ smtpRefuses: true });
    await expect(ops.createEmailJob(request(['a@x.test', 'b@x.test'], true))).rejects.toMatchObject({ status: 429 });
    expect(limiter.refundQuota).toHaveBeenCalledWith(key, 2);
    expect(create).not.toHaveBeenCalled();
  });

  it('a store that cannot take the job: 503 UPSTREAM_UNAVAILABLE with Retry-After, the quotas given back', async () => {
    const { ops, limiter } = setup({ storeFails: true });
    await expect(ops.createEmailJob(request(['a@x.test'], false))).rejects.toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE', headers: { 'Retry-After': '5' } });
    expect(limiter.refundQuota).toHaveBeenCalledWith(key, 1);
  });
});
