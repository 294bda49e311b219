// The embedded job queue's tables in DATA_DIR/jobs.db (docs/adr/0030): a file apart from service.db, so that a large
// submission never holds the lock the usage counters' writer needs (docs/adr/0019).
import type Database from 'better-sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  status TEXT NOT NULL,
  smtp INTEGER NOT NULL,
  total INTEGER NOT NULL,
  distinct_items INTEGER NOT NULL,
  remaining INTEGER NOT NULL,
  processed INTEGER NOT NULL DEFAULT 0,
  n_deliverable INTEGER NOT NULL DEFAULT 0,
  n_undeliverable INTEGER NOT NULL DEFAULT 0,
  n_risky INTEGER NOT NULL DEFAULT 0,
  n_unknown INTEGER NOT NULL DEFAULT 0,
  n_not_checked INTEGER NOT NULL DEFAULT 0,
  retries_pending INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  expires_at INTEGER NOT NULL,
  webhook_url TEXT,
  webhook_secret TEXT,
  webhook_state TEXT,
  webhook_attempts INTEGER NOT NULL DEFAULT 0,
  webhook_due_at INTEGER
);
CREATE INDEX IF NOT EXISTS jobs_expiry ON jobs (expires_at);
CREATE INDEX IF NOT EXISTS jobs_webhooks ON jobs (webhook_due_at) WHERE webhook_state = 'pending';
CREATE TABLE IF NOT EXISTS job_items (
  job_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  email TEXT NOT NULL,
  first_idx INTEGER,
  open INTEGER NOT NULL,
  due_at INTEGER NOT NULL,
  lease_owner TEXT,
  claims INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  done INTEGER NOT NULL DEFAULT 0,
  status TEXT,
  reason TEXT,
  result TEXT,
  seq INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, idx)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_items_copies ON job_items (job_id, first_idx) WHERE first_idx IS NOT NULL;
`;

/**
 * Items are claimed in `seq` order within a job (grouped by domain: docs/jobs.md), through this index; a file made
 * before `seq` gets the column (0: its items keep their order by index) and the index.
 */
const CLAIM_ORDER = `
CREATE INDEX IF NOT EXISTS job_items_claim ON job_items (due_at, job_id, seq) WHERE open = 1;
DROP INDEX IF EXISTS job_items_due;
`;

/** Create the tables when absent, add what a file of an earlier version lacks (start-up: before the service serves). */
export function migrateJobs(db: Database.Database): void {
  const present = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('jobs', 'job_items')").get() as { n: number };
  if (present.n < 2) db.exec(SCHEMA);
  const seq = db.prepare("SELECT count(*) AS n FROM pragma_table_info('job_items') WHERE name = 'seq'").get() as { n: number };
  if (seq.n === 0) db.exec('ALTER TABLE job_items ADD COLUMN seq INTEGER NOT NULL DEFAULT 0');
  db.exec(CLAIM_ORDER);
}

/** A jobs row as stored. */
export interface JobRow {
  id: string;
  key_id: string;
  status: string;
  smtp: number;
  total: number;
  distinct_items: number;
  remaining: number;
  processed: number;
  n_deliverable: number;
  n_undeliverable: number;
  n_risky: number;
  n_unknown: number;
  n_not_checked: number;
  retries_pending: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  expires_at: number;
  webhook_url: string | null;
  webhook_secret: string | null;
  webhook_state: string | null;
  webhook_attempts: number;
}
