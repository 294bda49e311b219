// Starting the list of capabilities, in order: each gets the shared parts, its own settings and what the ones before
// it provided; their handlers, datasets, readiness checks, listening and close hooks are gathered here.
import type { Dataset } from '../../adapters/files/dataset.js';
import type { Config } from '../../config.js';
import type { Handlers, OperationId } from '../../operations/types.js';
import type { Capability, Provided, Shared, Started } from '../capability.js';

export interface StartedList {
  handlers: Partial<Handlers>;
  datasets: Dataset<unknown>[];
  readiness: Record<string, () => boolean>;
  /** Every capability's degraded notes, merged. */
  degraded(): Record<string, string>;
  /** Settles when every background load has. */
  loaded: Promise<void>;
  /** Each capability's listening hook, each in its own turn of the event loop (each may be ~0.1 s of CPU). */
  listening(): void;
  /** Every capability's close, the last started first. */
  close(): Promise<void>;
}

const pick = <K extends keyof Config>(config: Readonly<Config>, keys: readonly K[]): Pick<Config, K> =>
  Object.fromEntries(keys.map((k) => [k, config[k]])) as Pick<Config, K>;

/** Start each in turn (`begin` hooks first, all of them, so that their reads start before any start-up work). */
export async function startCapabilities(list: readonly Capability[], config: Readonly<Config>, begun: unknown[], shared: Shared): Promise<StartedList> {
  const provided: Partial<Provided> = {};
  const started: Started[] = [];
  for (const [i, capability] of list.entries()) {
    const need = <N extends keyof Provided>(name: N): Provided[N] => {
      if (!(name in provided)) throw new Error(`capability ${capability.name} needs ${String(name)}, which no capability before it in the list provides`);
      return provided[name] as Provided[N];
    };
    const provide = <N extends keyof Provided>(name: N, value: Provided[N]) => void (provided[name] = value);
    const dataset = (name: string): Dataset<unknown> => {
      const found = started.flatMap((s) => s.datasets ?? []).find((d) => d.name === name);
      if (!found) throw new Error(`capability ${capability.name} needs dataset ${name}, which no capability before it in the list declares`);
      return found;
    };
    started.push(await capability.start({ ...shared, config: pick(config, capability.config), need, provide, dataset }, begun[i]));
  }
  const hooks = started.flatMap((s) => (s.listening ? [s.listening] : []));
  return {
    handlers: Object.assign({}, ...started.map((s) => s.handlers)),
    datasets: started.flatMap((s) => s.datasets ?? []),
    readiness: Object.assign({}, ...started.map((s) => s.readiness ?? {})),
    degraded: () => Object.assign({}, ...started.map((s) => s.degraded?.() ?? {})),
    loaded: Promise.all(started.map((s) => s.loaded)).then(() => undefined),
    listening: () => hooks.reduceRight<() => void>((next, hook) => () => setImmediate(() => (hook(), next())), () => undefined)(),
    async close() {
      for (const s of [...started].reverse()) await s.close?.();
    },
  };
}

/** The operations of openapi.yaml (outside the System tag, served by http/system-routes.ts) that no capability handles. */
export function unhandled(document: Record<string, any>, handlers: Partial<Handlers>): string[] {
  const operations = Object.values<Record<string, any>>(document.paths ?? {}).flatMap((item) => Object.values<any>(item));
  const ids = operations.filter((op) => op?.operationId && !op.tags?.includes('System')).map((op) => op.operationId as OperationId);
  return ids.filter((id) => !(id in handlers));
}
