// chooseCoding: RFC 9110 §12.5.3 weights, ties broken by the server's order.
import { describe, expect, it } from 'vitest';
import { chooseCoding } from '../../src/domain/accept-encoding.js';

const OFFERED = ['br', 'gzip'];

describe('chooseCoding', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['deflate', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['GZIP', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['gzip;q=0.2, br;q=0.8', 'br'],
    ['br;q=0, gzip;q=0', null],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['*;q=0', null],
    ['gzip ; q=0.5', 'gzip'],
    ['gzip;q=0.000', null],
    [' , gzip', 'gzip'],
  ])('Accept-Encoding %j -> %j', (field, want) => {
    expect(chooseCoding(field, OFFERED)).toBe(want);
  });

  it('offers only what is made: br alone acceptable but not offered gives none', () => {
    expect(chooseCoding('br', ['gzip'])).toBeNull();
  });
});
