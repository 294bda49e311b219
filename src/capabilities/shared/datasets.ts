// The capabilities' datasets, one list under one set of names: /readyz's dates and states, the dataset_* metrics,
// the start-up warning for aged ones, and the SIGHUP reloader (each dataset's reload(), one after another).
import type { Dataset } from '../../adapters/files/dataset.js';
import { STATE_VALUE, warnStaleDatasets, type DatasetCatalogue, type DatasetStatus } from '../../adapters/files/datasets.js';
import { createReloader, type Reloader } from '../../adapters/files/reload.js';
import type { Logger } from '../../http/logging.js';
import type { Metrics } from '../../http/metrics.js';

export interface DatasetWiring {
  /** Every dataset's state now, in data/datasets.json's order (GET /readyz). */
  statuses(): DatasetStatus[];
  reloader: Reloader;
}

export function wireDatasets(datasets: readonly Dataset<unknown>[], catalogue: DatasetCatalogue, logger: Logger, metrics: Metrics): DatasetWiring {
  const names = datasets.map((d) => d.name);
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  if (twice.length > 0) throw new Error(`datasets declared twice: ${twice.join(', ')}`);
  const undeclared = catalogue.names.filter((n) => !names.includes(n));
  if (undeclared.length > 0) throw new Error(`${catalogue.path} dates datasets no capability declares: ${undeclared.join(', ')}`);
  const ordered = [...datasets].sort((a, b) => catalogue.names.indexOf(a.name) - catalogue.names.indexOf(b.name));
  const statuses = () => ordered.map((d) => d.status());
  warnStaleDatasets(logger, statuses());
  const byName = (read: (s: DatasetStatus) => number) => () => Object.fromEntries(statuses().map((s) => [s.name, read(s)]));
  metrics.addGauge('dataset_state', 'Shipped datasets: 0 fresh, 1 aged (past its maximum age), 2 expired (past its validity)', 'dataset', byName((s) => STATE_VALUE[s.state]));
  metrics.addGauge('dataset_age_days', 'Age in days of each shipped dataset', 'dataset', byName((s) => s.ageDays));
  const reloadable = ordered.filter((d) => d.reloadable);
  const counted = (read: (c: { reloads: number; failures: number }) => number) => () => Object.fromEntries(reloadable.map((d) => [d.name, read(d.counts())]));
  metrics.addCounters('dataset_reloads_total', 'Reloads of a file dataset that succeeded (SIGHUP or a refresh)', 'dataset', counted((c) => c.reloads));
  metrics.addCounters('dataset_reload_failures_total', 'Reloads of a file dataset that failed and kept the data loaded before', 'dataset', counted((c) => c.failures));
  const reloader = createReloader(reloadable, logger, catalogue);
  return { statuses, reloader };
}
