// Job webhooks signed as Standard Webhooks specifies (standardwebhooks.com: webhook-id, webhook-timestamp,
// webhook-signature `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`), POSTed under the one outbound target guard.
import { createHmac, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseTlsTarget } from '../../domain/tls-target.js';
import { parseUrl, type ParsedUrl } from '../../domain/url.js';
import { RefusedTarget } from '../../errors.js';
import { guardedAddress, type TargetGuardOptions } from '../tls/target-guard.js';

/** A new signing secret: `whsec_` and 24 random bytes in base64 (shown once, at the job's creation). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The `webhook-signature` value of a message: `v1,` and the base64 HMAC-SHA256 keyed by the secret's decoded bytes. */
function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export interface WebhookPost {
  url: string;
  secret: string;
  /** The message id: the same on every retry of one event (receivers deduplicate on it). */
  id: string;
  body: string;
}

export interface WebhookSenderOptions extends TargetGuardOptions {
  timeoutMs: number;
  now?: () => number;
}

/** What one delivery got: a 2xx, another status, or no answer (with why, for the log). */
export type Delivery = { ok: true } | { ok: false; why: string };

/** A sender of signed webhooks: resolves the URL's host under the guard, connects to that address, 2xx is delivered. */
export function createWebhookSender(o: WebhookSenderOptions): (post: WebhookPost) => Promise<Delivery> {
  const now = o.now ?? Date.now;
  return async (post) => {
    const url = parseUrl(post.url);
    if (url === null) return { ok: false, why: 'the webhook URL does not parse' };
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const target = parseTlsTarget(host);
    if (target.kind === 'invalid') return { ok: false, why: 'the webhook URL has no valid host' };
    let guarded: Awaited<ReturnType<typeof guardedAddress>>;
    try {
      guarded = await guardedAddress(o, target);
    } catch (err) {
      return { ok: false, why: err instanceof RefusedTarget ? 'the webhook host resolves to a non-public address' : 'the webhook host could not be resolved' };
    }
    if ('failure' in guarded) return { ok: false, why: guarded.failure };
    const timestamp = Math.floor(now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(post.body)),
      host: url.host,
      'user-agent': 'email-jobs-webhook',
      'webhook-id': post.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': webhookSignature(post.secret, post.id, timestamp, post.body),
    };
    return send(url, guarded.address, headers, post.body, o.timeoutMs);
  };
}

function send(url: ParsedUrl, address: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Delivery> {
  return new Promise((resolve) => {
    const https = url.protocol === 'https:';
    const req = (https ? httpsRequest : httpRequest)({
      host: address,
      port: url.port || (https ? 443 : 80),
      servername: https ? url.hostname : undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers,
      agent: false,
      timeout: timeoutMs,
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ ok: false, why: err.message }));
    req.on('response', (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      resolve(status >= 200 && status < 300 ? { ok: true } : { ok: false, why: `answered HTTP ${status}` });
    });
    req.end(body);
  });
}
