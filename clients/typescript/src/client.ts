// Typed client for the Validation and Lookup API (OpenAPI 3.1): openapi-fetch over the generated schema, one method per operation.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];

export type IbanResult = Schemas['IbanResult'];
export type BicResult = Schemas['BicResult'];
export type DnsResult = Schemas['DnsResult'];
export type DnsRecord = Schemas['DnsRecord'];
export type DnsRecordType = DnsRecord['type'];
export type TlsResult = Schemas['TlsResult'];
export type PasswordStrengthResult = Schemas['PasswordStrengthResult'];
export type CardValidationResult = Schemas['CardValidationResult'];
export type IpGeolocationResult = Schemas['IpGeolocationResult'];
export type EmailValidationResult = Schemas['EmailValidationResult'];
export type Deliverability = Schemas['Deliverability'];
export type UsageResult = Schemas['UsageResult'];
export type UsageWindow = Schemas['UsageWindow'];
export type ErrorInfo = Schemas['ErrorInfo'];
/** An item of a bulk request that the single operation would refuse: its status and error (code, message, details). */
export type BulkItemError = Schemas['BulkItemError'];
/** One element of a bulk answer, in the order of the items sent: the single operation's result, or its error. */
export type IbanBulkItem = Schemas['IbanBulkResponse']['results'][number];
export type BicBulkItem = Schemas['BicBulkResponse']['results'][number];
export type EmailBulkItem = Schemas['EmailBulkResponse']['results'][number];
export type FieldError = Schemas['FieldError'];
/** An email verification job's status and progress (GET /api/v1/email/jobs/{id}). */
export type EmailJob = Schemas['EmailJob'];
/** A new job: its status, and the webhook's signing secret when a webhookUrl was given (shown only here). */
export type EmailJobCreated = Schemas['EmailJobCreated'];
/** One line of a job's results: the item, its attempts, its deliverability status and reason, its result (or null). */
export type EmailJobResultLine = Schemas['EmailJobResultLine'];
/** A code of the API's error model, or one of the client's own for an answer that is not ErrorInfo. */
export type ErrorCode = Schemas['ErrorCode'] | 'UNEXPECTED_RESPONSE';

export interface ClientOptions {
  /** Where the service runs, e.g. `http://localhost:8080` (no `/api/v1`). */
  baseUrl: string;
  /** The API key, sent as `X-Api-Key` on every request. */
  apiKey: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: ((input: Request) => Promise<Response>) | undefined;
  /** Extra headers sent on every request. */
  headers?: Record<string, string> | undefined;
}

/** A non-2xx answer: the service's ErrorInfo body, with the status and headers that came with it. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  /** Correlation id (ErrorInfo `requestId`, else the `X-Request-Id` header); null for the missing-key 401. */
  readonly requestId: string | null;
  /** Seconds to wait before retrying (body `retryAfter`, else the `Retry-After` header); null when not given. */
  readonly retryAfter: number | null;
  readonly details: FieldError[];
  /** The request path the service reports, e.g. `/api/v1/email`. */
  readonly path: string | null;
  /** The raw body: ErrorInfo, or whatever else came back. */
  readonly body: unknown;

  constructor(init: {
    status: number;
    code: ErrorCode;
    message: string;
    requestId: string | null;
    retryAfter: number | null;
    details: FieldError[];
    path: string | null;
    body: unknown;
  }) {
    super(init.message);
    this.name = 'ApiError';
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.details = init.details;
    this.path = init.path;
    this.body = init.body;
  }
}

function isErrorInfo(body: unknown): body is ErrorInfo {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.code === 'string' && typeof b.message === 'string';
}

function headerSeconds(value: string | null): number | null {
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  return Number(value.trim());
}

/** Build the ApiError for a non-2xx response whose body openapi-fetch already read (JSON when it parsed). */
export function toApiError(response: Response, body: unknown): ApiError {
  const headerRequestId = response.headers.get('x-request-id');
  const headerRetry = headerSeconds(response.headers.get('retry-after'));
  if (isErrorInfo(body)) {
    const b = body as ErrorInfo & { retryAfter?: number };
    return new ApiError({
      status: response.status,
      code: b.code,
      message: b.message,
      requestId: b.requestId ?? null,
      retryAfter: typeof b.retryAfter === 'number' ? b.retryAfter : headerRetry,
      details: Array.isArray(b.details) ? b.details : [],
      path: typeof b.path === 'string' ? b.path : null,
      body,
    });
  }
  return new ApiError({
    status: response.status,
    code: 'UNEXPECTED_RESPONSE',
    message: `unexpected ${response.status} answer without an ErrorInfo body`,
    requestId: headerRequestId,
    retryAfter: headerRetry,
    details: [],
    path: null,
    body,
  });
}

/** openapi-fetch's result: data on 2xx, error (the parsed body) otherwise. */
function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  if (result.response.ok) throw toApiError(result.response, undefined);
  throw toApiError(result.response, result.error);
}

/**
 * One method per operation of openapi.yaml; each resolves with the operation's typed 200 body
 * and rejects with ApiError for every non-2xx answer (network failures reject with fetch's own error).
 */
export class ValidationClient {
  /** The underlying openapi-fetch client, for anything the methods do not cover. */
  readonly raw: Client<paths>;

  constructor(options: ClientOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      headers: { ...options.headers, 'X-Api-Key': options.apiKey },
    });
  }

  /** GET /api/v1/iban/{iban}: structure and MOD 97-10 checksum, bank fields, resolved BIC. */
  async validateIban(iban: string): Promise<IbanResult> {
    return unwrap(await this.raw.GET('/api/v1/iban/{iban}', { params: { path: { iban } } }));
  }

  /** GET /api/v1/bic/{bic}: ISO 9362 structure and extracted fields. */
  async validateBic(bic: string): Promise<BicResult> {
    return unwrap(await this.raw.GET('/api/v1/bic/{bic}', { params: { path: { bic } } }));
  }

  /** GET /api/v1/dns/{domain}: records of the asked types (default A) and the SPF/DKIM/DMARC analysis. */
  async lookupDns(domain: string, options: { types?: readonly (DnsRecordType | Lowercase<DnsRecordType>)[] | string } = {}): Promise<DnsResult> {
    const { types } = options;
    const type = types === undefined ? undefined : typeof types === 'string' ? types : types.join(',');
    return unwrap(
      await this.raw.GET('/api/v1/dns/{domain}', {
        params: { path: { domain }, query: type === undefined || type === '' ? {} : { type } },
      }),
    );
  }

  /** GET /api/v1/ssl/{domain}: the certificate on port 443, its validity and a grade. */
  async inspectTlsCertificate(domain: string): Promise<TlsResult> {
    return unwrap(await this.raw.GET('/api/v1/ssl/{domain}', { params: { path: { domain } } }));
  }

  /** POST /api/v1/password/strength: strength estimate and k-anonymity breach check. */
  async checkPasswordStrength(password: string): Promise<PasswordStrengthResult> {
    return unwrap(await this.raw.POST('/api/v1/password/strength', { body: { password } }));
  }

  /** POST /api/v1/creditcard/validate: Luhn, brand and BIN data; only the last four digits come back. */
  async validateCard(cardNumber: string): Promise<CardValidationResult> {
    const data = unwrap(await this.raw.POST('/api/v1/creditcard/validate', { body: { cardNumber } }));
    // openapi-fetch's Readable<> drops properties whose type is exactly null (cardCategory): restore it for the type.
    return { cardCategory: null, ...data };
  }

  /** GET /api/v1/ip/{ip}: location and network of an IPv4 or IPv6 address. */
  async lookupIp(ip: string): Promise<IpGeolocationResult> {
    return unwrap(await this.raw.GET('/api/v1/ip/{ip}', { params: { path: { ip } } }));
  }

  /** GET /api/v1/ip: location and network of the caller's own address. */
  async lookupOwnIp(): Promise<IpGeolocationResult> {
    return unwrap(await this.raw.GET('/api/v1/ip', {}));
  }

  /**
   * GET /api/v1/email?address=: format, MX/A records, role, disposable and free-provider flags; with `{ smtp: true }`
   * also the mailbox verified over SMTP (`deliverability`; the server must have it on, SMTP_CHECK=on).
   */
  async validateEmail(address: string, options: { smtp?: boolean } = {}): Promise<EmailValidationResult> {
    const query = options.smtp ? { address, smtp: 'true' as const } : { address };
    return unwrap(await this.raw.GET('/api/v1/email', { params: { query } }));
  }

  /**
   * POST /api/v1/iban/bulk: up to BULK_MAX_ITEMS (default 1,000) IBANs in one request, each counted as one request
   * against the key's limits; one element per item, in order (`status: 200` with the result, or the item's error).
   */
  async validateIbans(ibans: readonly string[]): Promise<IbanBulkItem[]> {
    return unwrap(await this.raw.POST('/api/v1/iban/bulk', { body: { items: [...ibans] } })).results;
  }

  /** POST /api/v1/bic/bulk: up to BULK_MAX_ITEMS BICs in one request, answered in order like validateIbans. */
  async validateBics(bics: readonly string[]): Promise<BicBulkItem[]> {
    return unwrap(await this.raw.POST('/api/v1/bic/bulk', { body: { items: [...bics] } })).results;
  }

  /**
   * POST /api/v1/email/bulk: up to BULK_MAX_ITEMS addresses, each distinct domain looked up once, answered in order;
   * with `{ smtp: true }` each mailbox verified over SMTP, a domain's addresses together.
   */
  async validateEmails(addresses: readonly string[], options: { smtp?: boolean } = {}): Promise<EmailBulkItem[]> {
    const body = options.smtp ? { items: [...addresses], smtp: true } : { items: [...addresses] };
    return unwrap(await this.raw.POST('/api/v1/email/bulk', { body })).results;
  }

  /**
   * POST /api/v1/email/jobs: queue up to JOBS_MAX_ITEMS addresses for verification (each counted against the daily and
   * monthly quotas at submission), given as a list or as a CSV file's text (`{ csv }`: a header row, the `email`
   * column, else the first); resolves with the queued job (202), `webhookSecret` included when `webhookUrl` is.
   */
  async createEmailJob(list: readonly string[] | { csv: string }, options: { smtp?: boolean; webhookUrl?: string } = {}): Promise<EmailJobCreated> {
    const { smtp, webhookUrl } = options;
    if ('csv' in list) {
      const query = { ...(smtp === undefined ? {} : { smtp: smtp ? ('true' as const) : ('false' as const) }), ...(webhookUrl ? { webhookUrl } : {}) };
      const csv = list.csv;
      return unwrap(
        await this.raw.POST('/api/v1/email/jobs', {
          params: { query },
          body: { items: [] },
          headers: { 'content-type': 'text/csv' },
          bodySerializer: () => csv,
        }),
      );
    }
    const body = { items: [...list], ...(smtp === undefined ? {} : { smtp }), ...(webhookUrl ? { webhookUrl } : {}) };
    return unwrap(await this.raw.POST('/api/v1/email/jobs', { body }));
  }

  /** GET /api/v1/email/jobs/{id}: the job's status, progress and counts (404 for another key's or an expired job). */
  async getEmailJob(id: string): Promise<EmailJob> {
    return unwrap(await this.raw.GET('/api/v1/email/jobs/{id}', { params: { path: { id } } }));
  }

  /** DELETE /api/v1/email/jobs/{id}: cancel; items not verified yet end not_checked/cancelled (the quota is not refunded). */
  async cancelEmailJob(id: string): Promise<EmailJob> {
    return unwrap(await this.raw.DELETE('/api/v1/email/jobs/{id}', { params: { path: { id } } }));
  }

  /**
   * GET /api/v1/email/jobs/{id}/results as NDJSON, one line at a time as the answer streams in (never all in memory):
   * the lines finished so far, in submission order; `status` keeps one deliverability status only.
   */
  async *getEmailJobResults(id: string, options: { status?: EmailJobResultLine['status'] } = {}): AsyncGenerator<EmailJobResultLine> {
    const result = await this.raw.GET('/api/v1/email/jobs/{id}/results', {
      params: { path: { id }, query: options.status ? { status: options.status } : {} },
      headers: { accept: 'application/x-ndjson' },
      parseAs: 'stream',
    });
    // openapi-fetch reads an error's body itself (JSON when it parses): only a 2xx is streamed.
    if (!result.response.ok || !result.data) throw toApiError(result.response, result.error);
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of result.data as unknown as AsyncIterable<Uint8Array>) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.trim() !== '') yield JSON.parse(line) as EmailJobResultLine;
      }
    }
    if (pending.trim() !== '') yield JSON.parse(pending) as EmailJobResultLine;
  }

  /** GET /api/v1/usage: the calling key's limits, usage and reset times per window; not counted itself. */
  async getUsage(): Promise<UsageResult> {
    return unwrap(await this.raw.GET('/api/v1/usage', {}));
  }
}
