// text/csv request bodies (RFC 4180) through koa-body: UTF-8 only, optionally compressed; the
// list's addresses become the JSON body's `items`, so the validator and the handler see one shape for both media types.
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { CsvError, csvColumn } from '../domain/csv.js';
import { badBody, canonicalCoding, declaredLength, tooLarge } from './json-body.js';

const CSV_TYPE = /^text\/csv\s*(?:;|$)/i;
const OTHER_CHARSET = /;\s*charset\s*=\s*(?!"?(?:utf-?8|us-ascii)"?\s*(?:;|$))/i;

/** Whether the request says its body is CSV. */
export const isCsvRequest = (ctx: Context): boolean => CSV_TYPE.test(ctx.req.headers['content-type'] ?? '');

const parser = (limit: number) =>
  koaBody({
    json: false,
    urlencoded: false,
    text: true,
    multipart: false,
    textLimit: limit,
    textTypes: ['text/csv'] as never,
    encoding: 'utf-8',
    parsedMethods: ['POST'] as never,
    onError: (err) => {
      if ((err as { status?: number }).status === 413) throw tooLarge(limit);
      throw badBody('request body could not be read', 'is not readable text/csv');
    },
  });
const parsers = new Map<number, ReturnType<typeof parser>>();

/**
 * The CSV body as `{ items }`: the column named `column` (case-insensitive) of its header row, else the first. 400 for
 * a charset other than UTF-8, bytes that are not UTF-8 or a malformed CSV (naming the line); 413 over `limit` bytes.
 */
export async function readCsvItems(ctx: Context, limit: number, column: string): Promise<{ items: string[] }> {
  if (declaredLength(ctx) > limit) throw tooLarge(limit);
  if (OTHER_CHARSET.test(ctx.req.headers['content-type'] ?? '')) throw badBody('request body must be UTF-8 encoded CSV', 'charset must be utf-8');
  canonicalCoding(ctx);
  let parse = parsers.get(limit);
  if (parse === undefined) parsers.set(limit, (parse = parser(limit)));
  await parse(ctx, async () => {});
  const text = (ctx.request as { body?: unknown }).body;
  if (typeof text !== 'string') return { items: [] };
  if (text.includes('\uFFFD')) throw badBody('request body must be UTF-8 encoded CSV', 'contains bytes that are not UTF-8');
  try {
    return { items: csvColumn(text, column) };
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    throw badBody('request body is not valid CSV', `line ${err.line}: ${err.message}`);
  }
}
