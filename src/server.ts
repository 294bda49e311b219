// HTTP server lifecycle: listen with bounded timeouts and header sizes; drain on SIGTERM/SIGINT, then close stores.
import { createServer, type Server } from 'node:http';
import type Koa from 'koa';

export interface ServerLimits {
  /** Whole request (headers + body) must arrive within this. */
  requestTimeoutMs: number;
  /** Headers must arrive within this (cuts slow-loris connections). */
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderSize: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderSize: 16 * 1024,
};

export function createHttpServer(app: Koa, limits: ServerLimits = DEFAULT_LIMITS): Server {
  const server = createServer({ maxHeaderSize: limits.maxHeaderSize, requestTimeout: limits.requestTimeoutMs }, app.callback());
  server.headersTimeout = limits.headersTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  return server;
}

export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Stop accepting, let in-flight requests finish (idle keep-alive connections are closed as they
 * become idle), and give up on stragglers after timeoutMs.
 */
export function drain(server: Server, timeoutMs: number): Promise<'drained' | 'timeout'> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (how: 'drained' | 'timeout') => {
      if (settled) return;
      settled = true;
      clearInterval(idle);
      clearTimeout(limit);
      resolve(how);
    };
    server.close(() => finish('drained'));
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const limit = setTimeout(() => {
      server.closeAllConnections();
      finish('timeout');
    }, timeoutMs);
  });
}
