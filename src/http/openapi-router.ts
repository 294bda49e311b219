// Precompiled routing for openapi-backend (OpenAPI 3.1 §4.8.2 path templating): one RegExp per template, built once.
import type { ErrorObject } from 'ajv';
import type { Operation, ParsedRequest, Request } from 'openapi-backend';
import { OpenAPIRouter } from 'openapi-backend';

interface Route {
  template: string;
  /** Null for a template without parameters (matched through the exact-path map). */
  regex: RegExp | null;
  names: string[];
  byMethod: Map<string, Operation>;
  /** The stock router's order: the template's literal length, longest first. */
  specificity: number;
}

/** What a request's path and query parse to once its operation is known; kept per request (the validator parses again). */
interface Parsed {
  operation: Operation;
  route: Route;
  /** The raw (percent-encoded) path values of the match. */
  values: RegExpExecArray | null;
  request?: ParsedRequest;
}

/**
 * Where a parsed request keeps the parameters it could not read (a repeated query parameter, broken percent-encoding
 * in a path value). parseRequest runs right after routing, before the key is checked: it notes them rather than
 * throwing, and the request validator refuses them (validationFail), after authentication and the limits like every
 * other malformed request (openapi.yaml, "Limits and headers").
 */
const UNREADABLE = Symbol('PrecompiledRouter.unreadable');
type Noted = ParsedRequest & { [UNREADABLE]?: ErrorObject[] };

/** The parameters parseRequest could not read, as Ajv-shaped errors for validationFail; undefined when none. */
export function unreadableParameters(parsed: ParsedRequest): readonly ErrorObject[] | undefined {
  return (parsed as Noted)[UNREADABLE];
}

function unreadable(where: 'path' | 'query', name: string, message: string): ErrorObject {
  return { keyword: 'unreadable', instancePath: `/${where}/${name}`, schemaPath: '#/unreadable', params: {}, message };
}

/** What parseRequest answers before routing (openapi-backend replaces it once an operation matched). */
const UNROUTED: ParsedRequest = Object.freeze({ method: '', path: '', headers: {}, cookies: {}, params: {}, query: {}, requestBody: undefined }) as ParsedRequest;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Where a request keeps its match between matchOperation and parseRequest: a property of the request object rather
 * than a WeakMap entry, which V8 keeps as an ephemeron that every scavenge must process.
 */
const PARSED = Symbol('PrecompiledRouter.parsed');
type Tagged = Request & { [PARSED]?: Parsed };

/** Operation methods as openapi-backend keys them (lower case), without a new string per request. */
const LOWER_METHODS: ReadonlyMap<string, string> = new Map(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'].map((m) => [m, m.toLowerCase()]));

/**
 * The stock OpenAPIRouter builds a RegExp per operation on every request and parses each request twice through
 * lodash, cookie and qs (the whole gap to bare Koa, docs/adr/0010). This subclass keeps its behaviour (exact paths
 * first, then templates by specificity; 404 vs 405 as its `strict` errors say) with the patterns compiled once, and
 * its parseRequest takes the query Koa already parsed. Differences, deliberate: a concrete path whose operations lack
 * the method is a 405 (the stock router falls through to a template the path also fits, against OpenAPI's matching
 * order), only ONE trailing slash is ignored (openapi.yaml, "One trailing slash"), a repeated or malformed query
 * value and broken percent-encoding in a path value are 400 INVALID_FORMAT, and query parameters the operation does
 * not declare are dropped (not refused).
 */
export class PrecompiledRouter extends OpenAPIRouter {
  private readonly exact = new Map<string, Route>();
  private readonly templated: Route[] = [];
  private readonly queryNames = new Map<Operation, string[]>();
  /**
   * When every template is a literal prefix and one parameter as its last segment (`/api/v1/bic/{bic}`), no two
   * can match one path: the route is found by the prefix in one lookup instead of trying each pattern. Null otherwise.
   */
  private readonly byPrefix: Map<string, Route> | null;

  constructor(opts: ConstructorParameters<typeof OpenAPIRouter>[0]) {
    super(opts);
    const byTemplate = new Map<string, Route>();
    for (const op of this.getOperations()) {
      let route = byTemplate.get(op.path);
      if (!route) {
        const names: string[] = [];
        const pattern = op.path
          .split(/(\{[^}]+\})/)
          .map((part) => {
            const m = /^\{([^}]+)\}$/.exec(part);
            if (!m) return escape(part);
            names.push(m[1]);
            return '([^/]+)';
          })
          .join('');
        route = {
          template: op.path,
          regex: names.length ? new RegExp(`^${pattern}$`) : null,
          names,
          byMethod: new Map(),
          specificity: op.path.replace(/\{.*?\}/g, '').length,
        };
        byTemplate.set(op.path, route);
        if (route.regex) this.templated.push(route);
        else this.exact.set(op.path, route);
      }
      route.byMethod.set(op.method, op);
      this.queryNames.set(op, (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name as string));
    }
    this.templated.sort((a, b) => b.specificity - a.specificity);
    const lastOnly = (t: string) => /^[^{}]*\/\{[^{}/]+\}$/.test(t);
    this.byPrefix = this.templated.every((r) => lastOnly(r.template))
      ? new Map(this.templated.map((r) => [r.template.slice(0, r.template.lastIndexOf('{')), r]))
      : null;
  }

  /** The methods a path answers (upper case, HEAD beside GET), for the Allow header of a 405; empty for an unknown path. */
  allowedMethods(rawPath: string): string[] {
    const path = this.relative(rawPath);
    const methods = new Set<string>();
    // A concrete path answers only its own operations (see matchOperation): the templates it also fits add nothing.
    const exact = this.exact.get(path);
    if (exact) for (const m of exact.byMethod.keys()) methods.add(m);
    else for (const r of this.templated) if (r.regex!.test(path)) for (const m of r.byMethod.keys()) methods.add(m);
    const out = [...methods].map((m) => m.toUpperCase());
    if (out.includes('GET')) out.push('HEAD');
    return out;
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(req: Request, strict?: boolean): Operation | undefined {
    const path = this.relative(req.path);
    const method = LOWER_METHODS.get(req.method) ?? req.method.toLowerCase();
    // OpenAPI 3.1 §4.8.8.2 (Path Templating Matching): a concrete path is matched before the templates, so a path
    // that is one is served by its own operations or is a 405: GET /api/v1/bic/bulk is not validateBic with bic=bulk.
    const exact = this.exact.get(path);
    if (exact) {
      const op = exact.byMethod.get(method);
      return op ? this.remember(req, op, exact, null) : this.unmatched(true, strict);
    }
    let pathKnown = false;
    if (this.byPrefix !== null) {
      const cut = path.lastIndexOf('/') + 1;
      const route = cut < path.length ? this.byPrefix.get(path.slice(0, cut)) : undefined;
      const m = route?.regex!.exec(path);
      if (!m) return this.unmatched(false, strict);
      const op = route!.byMethod.get(method);
      return op ? this.remember(req, op, route!, m) : this.unmatched(true, strict);
    }
    for (const route of this.templated) {
      const m = route.regex!.exec(path);
      if (!m) continue;
      pathKnown = true;
      const op = route.byMethod.get(method);
      if (op) return this.remember(req, op, route, m);
    }
    return this.unmatched(pathKnown, strict);
  }

  /** No operation: undefined, or (strict) the error openapi-backend turns into its 404 or 405 hook. */
  private unmatched(pathKnown: boolean, strict: boolean | undefined): undefined {
    if (!strict) return undefined;
    throw new Error(pathKnown ? '405-methodNotAllowed: this method is not registered for the route' : '404-notFound: no route matches request');
  }

  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    // Before routing openapi-backend parses without an operation, and uses nothing of it: no work for that call.
    if (!operation) return UNROUTED;
    let known = (req as Tagged)[PARSED];
    if (!known || known.operation !== operation) {
      // Matched elsewhere (a caller that skipped matchOperation): match once to take the parameters.
      this.matchOperation(req, true);
      known = (req as Tagged)[PARSED]!;
    }
    // Built once per request (openapi-backend asks again to validate). The body is read after routing, by the
    // request itself: the parsed view takes it from there when asked again.
    let parsed = known.request;
    if (!parsed) {
      const { route, values } = known;
      const errors: ErrorObject[] = [];
      const params: Record<string, string> = {};
      for (let i = 0; i < route.names.length; i++) params[route.names[i]] = decodePathValue(route.names[i], values![i + 1], errors);
      // Cookies are not parsed: no operation declares one. `ip` is the peer address the caller put on the request.
      parsed = known.request = {
        method: req.method,
        path: req.path,
        headers: req.headers,
        cookies: {},
        params,
        query: declaredQuery(req, this.queryNames.get(known.operation)!, errors),
        requestBody: req.body,
        body: req.body,
        ip: (req as { ip?: string }).ip,
      } as ParsedRequest;
      if (errors.length) (parsed as Noted)[UNREADABLE] = errors;
    } else {
      // Asked again to validate, once the request has read its body. Plain fields, not getters: an object literal
      // with accessors cost about a third of a BIC request's CPU (docs/adr/0020).
      parsed.requestBody = parsed.body = req.body;
    }
    return parsed;
  }

  /** The path without its query and without one trailing slash (the api root is '/'). */
  private relative(rawPath: string): string {
    const q = rawPath.indexOf('?');
    const path = q < 0 ? rawPath : rawPath.slice(0, q);
    return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  }

  private remember(req: Request, operation: Operation, route: Route, values: RegExpExecArray | null): Operation {
    (req as Tagged)[PARSED] = { operation, route, values };
    return operation;
  }
}

/** The decoded value; broken percent-encoding is noted in `errors` and the raw value kept (the request is refused). */
function decodePathValue(name: string, raw: string, errors: ErrorObject[]): string {
  if (!raw.includes('%')) return raw; // nothing to decode (most values)
  try {
    return decodeURIComponent(raw);
  } catch {
    errors.push(unreadable('path', name, 'is not valid percent-encoding'));
    return raw;
  }
}

/**
 * Only the declared query parameters (Koa's parsed query); a repeated one is malformed rather than silently picked:
 * noted in `errors` and left out. The query is not read (nor parsed by Koa) for an operation that declares none.
 */
function declaredQuery(req: Request, names: string[], errors: ErrorObject[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!names.length) return out;
  const query = req.query;
  if (query === undefined) return out;
  const search = typeof query === 'string' ? new URLSearchParams(query) : null;
  for (const name of names) {
    const value = search ? fromSearch(search, name) : (query as Record<string, string | string[]>)[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) errors.push(unreadable('query', name, 'must be given once'));
    else out[name] = value;
  }
  return out;
}

function fromSearch(search: URLSearchParams, name: string): string | string[] | undefined {
  const values = search.getAll(name);
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}
