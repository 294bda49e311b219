// The log sink: every line arrives, in order, with one write per batch; flushSync empties the queue.
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogSink } from '../../src/adapters/logging/log-sink.js';
import { waitFor } from '../support/wait.js';

const file = () => join(mkdtempSync(join(tmpdir(), 'vls-sink-')), 'log');

describe('LogSink', () => {
  it('writes every line in order, asynchronously', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LogSink(fd);
    for (let i = 0; i < 5000; i++) sink.write(`line ${i}\n`);
    const expected = Array.from({ length: 5000 }, (_, i) => `line ${i}\n`).join('');
    expect(readFileSync(path, 'utf8')).toBe(''); // nothing written synchronously
    // Every line arrives by the asynchronous writes alone; flushSync then has nothing left to write.
    await waitFor(() => readFileSync(path, 'utf8').length === expected.length, { what: 'the 5000 lines on disk' });
    sink.flushSync();
    closeSync(fd);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(5000);
    expect(lines.every((l, i) => l === `line ${i}`)).toBe(true);
  });

  it('flushSync writes what is queued', () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = new LogSink(fd);
    sink.write('a\n');
    sink.write('b\n');
    sink.flushSync();
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe('a\nb\n');
  });

  it('drops lines past its bound instead of growing without limit', () => {
    const sink = new LogSink(1, 10);
    expect(sink.write('12345\n')).toBe(true);
    expect(sink.write('1234567\n')).toBe(false);
    expect(sink.dropped).toBe(1);
  });
});
