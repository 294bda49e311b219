// Precompiled route matching for the operations of openapi.yaml: one regex per path template, built once.
import { ApiError } from './errors.js';

export interface RouteOperation {
  operationId: string;
  method: string;
  /** Path template as in openapi.yaml, e.g. /api/v1/bic/{bic}. */
  template: string;
  hasBody: boolean;
  /** Declared query parameter names; others are ignored. */
  queryParams: string[];
}

interface PathRoute {
  template: string;
  regex: RegExp | null;
  names: string[];
  methods: Map<string, RouteOperation>;
  allow: string;
}

export type RouteMatch =
  | { kind: 'operation'; op: RouteOperation; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string }
  | { kind: 'not-found' };

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class RouteTable {
  private readonly exact = new Map<string, PathRoute>();
  private readonly templated: PathRoute[] = [];

  constructor(operations: RouteOperation[]) {
    const byTemplate = new Map<string, PathRoute>();
    for (const op of operations) {
      let route = byTemplate.get(op.template);
      if (!route) {
        const names: string[] = [];
        const pattern = op.template
          .split(/(\{[^}]+\})/)
          .map((part) => {
            const m = /^\{([^}]+)\}$/.exec(part);
            if (!m) return escape(part);
            names.push(m[1]);
            return '([^/]+)';
          })
          .join('');
        route = {
          template: op.template,
          regex: names.length ? new RegExp(`^${pattern}$`) : null,
          names,
          methods: new Map(),
          allow: '',
        };
        byTemplate.set(op.template, route);
        if (route.regex) this.templated.push(route);
        else this.exact.set(op.template, route);
      }
      route.methods.set(op.method, op);
    }
    for (const route of byTemplate.values()) {
      const methods = [...route.methods.keys()];
      if (methods.includes('GET')) methods.push('HEAD');
      route.allow = methods.join(', ');
    }
  }

  /** Match a raw (still percent-encoded) path; path parameters come back decoded. */
  match(method: string, rawPath: string): RouteMatch {
    const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
    let route = this.exact.get(path);
    let values: string[] = [];
    if (!route) {
      for (const r of this.templated) {
        const m = r.regex!.exec(path);
        if (m) {
          route = r;
          values = m.slice(1);
          break;
        }
      }
    }
    if (!route) return { kind: 'not-found' };
    const op = route.methods.get(method === 'HEAD' ? 'GET' : method);
    if (!op) return { kind: 'method-not-allowed', allow: route.allow };
    const params: Record<string, string> = {};
    for (let i = 0; i < route.names.length; i++) {
      const name = route.names[i];
      try {
        params[name] = decodeURIComponent(values[i]);
      } catch {
        throw new ApiError(400, 'INVALID_FORMAT', `parameter ${name} is not valid percent-encoding`, {
          details: [{ field: name, message: 'is not valid percent-encoding' }],
        });
      }
    }
    return { kind: 'operation', op, params };
  }
}
