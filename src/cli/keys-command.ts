// Keys CLI commands (docs/keys.md): create, import, list, revoke, deactivate, activate, update — against the server's own
// store. Started by src/cli/keys.ts, which checks the Node first.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { IMPORT_BATCH, ImportStoppedError, importInBatches, parseKeyLines } from '../accounts/key-import.js';
import { yieldLock } from '../adapters/sqlite/database.js';
import type { KeyRecord, KeyStore } from '../adapters/keys/key-store.js';
import { ConfigError } from '../errors.js';
import { loadConfig, MAX_LIMITS, type Config } from '../config.js';
import { openKeyStore } from './key-store-factory.js';

const USAGE = `usage: npm run keys -- <command> [options]
  create --name NAME [--per-minute N] [--per-day N] [--per-month N] [--smtp-per-day N] [--json]
  import FILE [--json]      JSON lines: {"name": "...", "perMinute": N, "perDay": N, "perMonth": N, "smtpPerDay": N} (limits optional)
  list [--json]
  update ID [--per-minute N] [--per-day N] [--per-month N] [--smtp-per-day N]
  revoke ID | deactivate ID | activate ID
`;

class UsageError extends Error {}

const out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);

/** The same bounds as the server-wide defaults (RATE_LIMIT_PER_MINUTE, QUOTA_PER_DAY, QUOTA_PER_MONTH). */
const MAX_LIMIT = {
  'per-minute': MAX_LIMITS.perMinute,
  'per-day': MAX_LIMITS.perDay,
  'per-month': MAX_LIMITS.perMonth,
  'smtp-per-day': MAX_LIMITS.smtpPerDay,
} as const;

/** A limit option's value, 1 to its bound; `--smtp-per-day` may be 0 (a key that may not verify over SMTP). */
function positive(name: keyof typeof MAX_LIMIT, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const max = MAX_LIMIT[name];
  const min = name === 'smtp-per-day' ? 0 : 1;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max.toExponential().replace('e+', 'e')}`);
  }
  return Number(raw);
}

/** A key as shown by list: never the key itself, nor its hash. */
function publicView(k: KeyRecord) {
  return { id: k.id, name: k.name, status: k.status, perMinute: k.perMinute, perDay: k.perDay, perMonth: k.perMonth, smtpPerDay: k.smtpPerDay, createdAt: k.createdAt };
}

/** `import FILE`: JSON lines, created in batches, each key printed once written. */
async function importKeys(store: KeyStore, file: string, json: boolean): Promise<number> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new Error(`${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
  let inputs;
  try {
    inputs = parseKeyLines(text);
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}; nothing imported`);
  }
  if (inputs.length === 0) throw new Error(`${file}: no key to import (one JSON object per line)`);
  // Batches of IMPORT_BATCH keys, each one transaction (or script), each printed once it is written, in the
  // file's order: whatever was written has been printed, even if a later batch fails.
  const print = (created: Array<{ record: KeyRecord; key: string }>) =>
    out(created.map(({ record, key }) => (json ? JSON.stringify({ ...publicView(record), key }) : key)).join('\n'));
  let said = 0;
  const progress = (done: number, total: number) => {
    if (total <= IMPORT_BATCH || (done < total && performance.now() - said < 1000)) return;
    said = performance.now();
    process.stderr.write(`imported ${done} of ${total} keys\n`);
  };
  try {
    await importInBatches(store, inputs, { onBatch: print, onProgress: progress, pause: yieldLock });
  } catch (err) {
    if (!(err instanceof ImportStoppedError)) throw err;
    throw new Error(`${file}: ${err.message}; the ${err.done} keys printed were created, the other ${err.total - err.done} were not`);
  }
  return 0;
}

/** `list`: a table (or JSON), the server's defaults marked where a key has none of its own. */
async function listKeys(store: KeyStore, json: boolean, config: Pick<Config, 'rateLimitPerMinute' | 'quotaPerDay' | 'quotaPerMonth' | 'smtpDailyPerKey'>): Promise<number> {
  const keys = (await store.list()).map(publicView);
  if (json) return out(JSON.stringify(keys)), 0;
  const effective = (v: number | null, d: number) => (v === null ? `${d}*` : String(v));
  out(['ID', 'NAME', 'STATUS', 'PER_MINUTE', 'PER_DAY', 'PER_MONTH', 'SMTP_PER_DAY', 'CREATED'].join('\t'));
  for (const k of keys) {
    const limits = [
      effective(k.perMinute, config.rateLimitPerMinute),
      effective(k.perDay, config.quotaPerDay),
      effective(k.perMonth, config.quotaPerMonth),
      effective(k.smtpPerDay, config.smtpDailyPerKey),
    ];
    out([k.id, k.name, k.status, ...limits, k.createdAt].join('\t'));
  }
  if (keys.some((k) => k.perMinute === null || k.perDay === null || k.perMonth === null || k.smtpPerDay === null)) out('* server default');
  return 0;
}

export async function runKeys(argv: string[], store: KeyStore, config: Pick<Config, 'rateLimitPerMinute' | 'quotaPerDay' | 'quotaPerMonth' | 'smtpDailyPerKey'>): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      'per-month': { type: 'string' },
      'smtp-per-day': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [command, id] = positionals;
  if (values.help || command === 'help') {
    out(USAGE);
    return 0;
  }
  if (!command) throw new UsageError('no command given');
  const limits = {
    perMinute: positive('per-minute', values['per-minute']),
    perDay: positive('per-day', values['per-day']),
    perMonth: positive('per-month', values['per-month']),
    smtpPerDay: positive('smtp-per-day', values['smtp-per-day']),
  };
  switch (command) {
    case 'create': {
      if (!values.name) throw new UsageError('create needs --name NAME');
      const { record, key } = await store.create({ name: values.name, ...limits });
      out(values.json ? JSON.stringify({ ...publicView(record), key }) : key);
      return 0;
    }
    case 'import': {
      // positionals[1] is the FILE here, not an ID.
      if (!id) throw new UsageError('import needs a FILE of JSON lines');
      if (values.name !== undefined || Object.values(limits).some((v) => v !== undefined)) {
        throw new UsageError('import takes each name and its limits from FILE');
      }
      return importKeys(store, id, values.json);
    }
    case 'list':
      return listKeys(store, values.json, config);
    case 'revoke':
    case 'deactivate':
    case 'activate': {
      if (!id) throw new UsageError(`${command} needs a key ID (see: npm run keys -- list)`);
      const status = command === 'revoke' ? 'revoked' : command === 'deactivate' ? 'inactive' : 'active';
      if (!(await store.setStatus(id, status))) {
        const why = command === 'revoke' ? ' (or it is already revoked)' : ` that can be ${status === 'active' ? 'activated' : 'deactivated'} (revocation is final)`;
        process.stderr.write(`no key ${id}${why}\n`);
        return 1;
      }
      out(`${id} ${status}`);
      return 0;
    }
    case 'update': {
      if (!id) throw new UsageError('update needs a key ID');
      if (Object.values(limits).every((v) => v === undefined)) throw new UsageError('update needs --per-minute, --per-day, --per-month or --smtp-per-day');
      if (!(await store.updateLimits(id, limits))) {
        process.stderr.write(`no key ${id}\n`);
        return 1;
      }
      out(`${id} updated`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

/** The CLI: reads process.argv and the environment, prints, and exits with the command's code. */
export async function main(): Promise<void> {
  let config: Readonly<Config>;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(1);
  }
  let store: KeyStore;
  try {
    // A bulk import's batch is one Redis script: give it longer than a request's command timeout.
    store = await openKeyStore(config, { commandTimeoutMs: 120_000 });
  } catch (err) {
    const why = err instanceof ConfigError ? err.message : `${config.redisUrl ? 'REDIS_URL' : 'DATA_DIR'}: ${(err as Error).message}`;
    process.stderr.write(`keys: cannot open the key store: ${why}\n`);
    process.exit(1);
  }
  let code = 1;
  try {
    code = await runKeys(process.argv.slice(2), store, config);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\n${USAGE}`);
      code = 2;
    } else {
      process.stderr.write(`keys: ${(err as Error).message}\n`);
    }
  } finally {
    await store.close();
  }
  // Every key printed must reach the reader: process.exit does not wait for stdout's pending writes into a pipe
  // (an import of 100,000 keys to a pipe lost all but its first few thousand lines).
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}

