// rememberBodyTypes: Koa's request.is with remembered answers gives what Koa's own gives, for every kind of call.
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { rememberBodyTypes } from '../../src/http/json-body.js';

const plain = new Koa();
const remembered = new Koa();
rememberBodyTypes(remembered.request);

/** koa-body passes its options' list, the same array on every call. */
const JSON_TYPES = ['application/json', '+json'];

function is(app: Koa, headers: Record<string, string>, ...args: unknown[]): unknown {
  const ctx = app.createContext({ headers } as unknown as IncomingMessage, {} as ServerResponse);
  return (ctx.request.is as (...a: unknown[]) => unknown)(...args);
}

const BODY = { 'content-length': '12' };
const cases: { given: string; headers: Record<string, string>; args: unknown[] }[] = [
  { given: 'application/json', headers: { ...BODY, 'content-type': 'application/json' }, args: [JSON_TYPES] },
  { given: 'JSON with a charset', headers: { ...BODY, 'content-type': 'application/json; charset=utf-8' }, args: [JSON_TYPES] },
  { given: 'upper case', headers: { ...BODY, 'content-type': 'Application/JSON' }, args: [JSON_TYPES] },
  { given: 'a +json type', headers: { ...BODY, 'content-type': 'application/problem+json' }, args: [JSON_TYPES] },
  { given: 'text/plain', headers: { ...BODY, 'content-type': 'text/plain' }, args: [JSON_TYPES] },
  { given: 'a malformed type', headers: { ...BODY, 'content-type': 'json' }, args: [JSON_TYPES] },
  { given: 'no Content-Type', headers: { ...BODY }, args: [JSON_TYPES] },
  { given: 'no body (no length, no coding)', headers: { 'content-type': 'application/json' }, args: [JSON_TYPES] },
  { given: 'a chunked body', headers: { 'transfer-encoding': 'chunked', 'content-type': 'application/json' }, args: [JSON_TYPES] },
  { given: 'an empty Content-Length', headers: { 'content-length': '', 'content-type': 'application/json' }, args: [JSON_TYPES] },
  { given: 'types as arguments', headers: { ...BODY, 'content-type': 'application/json' }, args: ['json', 'urlencoded'] },
  { given: 'one type as a string', headers: { ...BODY, 'content-type': 'application/json' }, args: ['application/*'] },
  { given: 'no types', headers: { ...BODY, 'content-type': 'application/json' }, args: [] },
];

describe('rememberBodyTypes', () => {
  it.each(cases)('$given: the same answer as Koa, asked twice', ({ headers, args }) => {
    const want = is(plain, headers, ...args);
    expect(is(remembered, headers, ...args)).toEqual(want);
    expect(is(remembered, headers, ...args)).toEqual(want);
  });

  it('answers by the Content-Type of each request, not the first one remembered', () => {
    const list = ['application/json', '+json'];
    expect(is(remembered, { ...BODY, 'content-type': 'application/json' }, list)).toBe('application/json');
    expect(is(remembered, { ...BODY, 'content-type': 'text/html' }, list)).toBe(false);
    expect(is(remembered, { 'content-type': 'application/json' }, list)).toBeNull();
    expect(is(remembered, { ...BODY, 'content-type': 'application/json' }, list)).toBe('application/json');
  });

  it('keeps answering correctly past the bound on remembered values', () => {
    const list = ['application/json', '+json'];
    for (let i = 0; i < 200; i++) {
      const type = i % 2 ? `application/x-${i}+json` : `text/x-${i}`;
      const headers = { ...BODY, 'content-type': type };
      expect(is(remembered, headers, list)).toEqual(is(plain, headers, list));
    }
  });
});
