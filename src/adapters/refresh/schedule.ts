// DATA_REFRESH's lists, from the settings (src/config.ts): the downloads, where they are saved, and which file the
// service reads each list from (the saved download once there is one). docs/data-sources.md "Automatic refresh".
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { fetchList } from './fetch-list.js';
import { disposableList, hostingAsnList, hostingList, torExitList } from './lists.js';
import { createRefresher, type Refresher, type RefresherOptions } from './refresher.js';

/** The settings DATA_REFRESH reads (src/config.ts). */
interface RefreshConfig {
  dataDir: string;
  dataRefreshTimeoutMs: number;
  dataRefreshMaxBytes: number;
  allowPrivateTargets: boolean;
  torExitsUrl: string;
  disposableDomainsUrl: string;
  hostingAsnUrl: string;
  hostingRangesUrls: Readonly<Record<string, readonly string[]>>;
}

/** The folder the downloads are written to: DATA_DIR/lists. */
const listsDir = (config: { dataDir: string }): string => join(config.dataDir, 'lists');

/** The saved download of a list (`tor-exits.txt`, `hosting-ranges.csv`, `hosting-asns.txt`, `disposable-domains.txt`) when there is one. */
export async function savedList(config: { dataDir: string; dataRefresh: boolean }, file: string): Promise<string | null> {
  if (!config.dataRefresh) return null;
  const path = join(listsDir(config), file);
  return access(path).then(() => path, () => null);
}

/**
 * The refresher of the four lists. `resolve` is the service's resolver (every download's host goes through the
 * outbound-target guard); `shipped` names the file each list is read from when there is no saved download.
 */
export function createDataRefresh(
  config: RefreshConfig,
  o: Pick<RefresherOptions, 'swap' | 'logger' | 'firstDelayMs' | 'outcome'> & { resolve: (name: string) => Promise<string[]>; shipped: { tor: string; hosting: string; asns: string; disposable: string } },
): Refresher {
  const fetch = (url: string) => fetchList({ resolve: o.resolve, allowPrivate: config.allowPrivateTargets, timeoutMs: config.dataRefreshTimeoutMs, maxBytes: config.dataRefreshMaxBytes }, url);
  const inUse = (file: string, shipped: string) => async () => (await savedList({ ...config, dataRefresh: true }, file)) ?? shipped;
  const lists = [
    torExitList(fetch, config.torExitsUrl, inUse('tor-exits.txt', o.shipped.tor)),
    hostingList(fetch, config.hostingRangesUrls, inUse('hosting-ranges.csv', o.shipped.hosting)),
    hostingAsnList(fetch, config.hostingAsnUrl, inUse('hosting-asns.txt', o.shipped.asns)),
    disposableList(fetch, config.disposableDomainsUrl, inUse('disposable-domains.txt', o.shipped.disposable)),
  ];
  return createRefresher({ dir: listsDir(config), lists, swap: o.swap, logger: o.logger, firstDelayMs: o.firstDelayMs, outcome: o.outcome });
}
