// REDIS_SENTINELS and REDIS_SENTINEL_NAME (src/config.ts): an alternative to REDIS_URL, checked at boot.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('REDIS_SENTINELS', () => {
  it('names the Sentinel target (port 26379 by default) as Redis mode', () => {
    const c = loadConfig({ REDIS_SENTINELS: '10.0.0.1,sentinel-2.internal:26380,[::1]:5000', REDIS_SENTINEL_NAME: 'main' });
    expect(c.redisUrl).toBe('redis-sentinel://10.0.0.1:26379,sentinel-2.internal:26380,[::1]:5000/main');
    expect(c.redisSentinels).toHaveLength(3);
  });

  it.each([
    [{ REDIS_SENTINELS: '10.0.0.1' }, 'REDIS_SENTINEL_NAME: is required with REDIS_SENTINELS'],
    [{ REDIS_SENTINEL_NAME: 'main' }, 'REDIS_SENTINELS: is required with REDIS_SENTINEL_NAME'],
    [{ REDIS_SENTINELS: '10.0.0.1', REDIS_SENTINEL_NAME: 'main', REDIS_URL: 'redis://r:6379' }, 'REDIS_SENTINELS: and REDIS_URL are alternatives'],
    [{ REDIS_SENTINELS: 'not a host:x', REDIS_SENTINEL_NAME: 'main' }, 'REDIS_SENTINELS: "not a host:x" is not host or host:port'],
  ])('refuses %o at boot', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
