// DATA_REFRESH over the capabilities' datasets: the lists it downloads (src/adapters/refresh/) are swapped in by the
// datasets' own reload, the one SIGHUP runs, which reads the saved download (listFile). docs/data-sources.md.
import cluster from 'node:cluster';
import type { Dataset } from '../../adapters/files/dataset.js';
import { EMAIL_LIST_FILES } from '../../adapters/mail/email-lists.js';
import type { Refresher } from '../../adapters/refresh/refresher.js';
import { createDataRefresh, savedList } from '../../adapters/refresh/schedule.js';
import { addressResolver } from '../../adapters/tls/target-guard.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../http/logging.js';
import type { Metrics } from '../../http/metrics.js';
import { projectPath } from '../../http/spec.js';
import type { Shared } from '../capability.js';

/** The saved download of each refreshable list, in DATA_DIR/lists. */
const SAVED = { 'ip-tor-exits': 'tor-exits.txt', 'ip-hosting': 'hosting-ranges.csv', 'ip-hosting-asns': 'hosting-asns.txt', 'email-disposable': 'disposable-domains.txt' } as const;
export type ListName = keyof typeof SAVED;

type RefreshCounts = ReturnType<Refresher['counts']>;

/** The files the lists are read from when DATA_REFRESH has saved none: the configured or shipped ones. */
export const shippedLists = (config: Pick<Config, 'hostingRangesFile' | 'hostingAsnFile' | 'torExitFile'>) => ({
  hosting: config.hostingRangesFile ?? projectPath('data/ip/hosting-ranges.csv'),
  asns: config.hostingAsnFile ?? projectPath('data/ip/hosting-asns.txt'),
  tor: config.torExitFile ?? projectPath('data/ip/tor-exits.txt'),
  disposable: EMAIL_LIST_FILES.disposable,
});

/** The file a list is read from now: its saved download under DATA_REFRESH=on, else `fallback`. */
export async function listFile(config: Pick<Config, 'dataDir' | 'dataRefresh'>, name: ListName, fallback: string): Promise<string> {
  return (await savedList(config, SAVED[name])) ?? fallback;
}

export interface RefreshWiring {
  /** This process's downloader, or null (DATA_REFRESH off, or a worker of WORKERS>1: the primary downloads). */
  refresher: Refresher | null;
  /** A list was saved (by the primary, under WORKERS>1): swap it in; `counts` are the primary's, for /metrics. */
  refreshed(name: string | null, counts?: RefreshCounts): Promise<void>;
  listening(): void;
  close(): void;
}

export function wireRefresh(config: Readonly<Config>, datasets: readonly Dataset<unknown>[], shared: Pick<Shared, 'resolver' | 'logger'> & { metrics: Metrics; logger: Logger }): RefreshWiring {
  // The swap is the dataset's reload: it reads the file just written, off the event loop, and counts as a reload.
  const swap = async (name: string) => void (await datasets.find((d) => d.name === name)!.reload());
  const refresher =
    config.dataRefresh && !cluster.isWorker
      ? createDataRefresh(config, { resolve: addressResolver(shared.resolver), shipped: shippedLists(config), swap, logger: shared.logger })
      : null;
  // 0 for each list until a refresh (and always with DATA_REFRESH off), so that the series exist for the alert.
  const zero = Object.fromEntries(Object.keys(SAVED).map((n) => [n, 0]));
  let fromPrimary: RefreshCounts = { refreshes: { ...zero }, failures: { ...zero } };
  const counts = () => refresher?.counts() ?? fromPrimary;
  shared.metrics.addCounters('dataset_refreshes_total', 'Downloads of a list (DATA_REFRESH) that passed the checks and are in use', 'dataset', () => counts().refreshes);
  shared.metrics.addCounters('dataset_refresh_failures_total', 'Downloads of a list (DATA_REFRESH) that failed; the list in use stayed', 'dataset', () => counts().failures);
  return {
    refresher,
    async refreshed(name, primaryCounts) {
      if (primaryCounts) fromPrimary = primaryCounts;
      if (name !== null && name in SAVED) await swap(name);
    },
    listening: () => void refresher?.start(),
    close: () => refresher?.stop(),
  };
}
