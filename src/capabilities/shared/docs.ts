// The 2.6 MB Redoc page (/docs), read at its first request and served from memory after; its gzip and br encodings are
// made right after that read (sent uncompressed until they exist). Read at start, the page held ~3 MB RSS in every
// process (ADR 0039); its encodings made at start cost 0.2-0.4 s of CPU and left +15-17 MB of compressor memory
// resident: for a page most processes never serve.
import { loadDocsPage, type DocsPage } from '../../adapters/files/docs-page.js';
import type { Logger } from '../../http/logging.js';
import { projectPath } from '../../http/spec.js';

/**
 * The page, read at the first call (null when it is not built: read once, so that it does not appear by waiting).
 * Concurrent first calls share the one read.
 */
export function docsPageOnDemand(logger: Pick<Logger, 'warn'>, path = projectPath('dist/docs/index.html')): () => Promise<DocsPage | null> {
  let docsPage: DocsPage | null = null;
  const read = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const publish = (page: DocsPage): void => {
        docsPage = page;
        resolve();
      };
      loadDocsPage(path, publish).catch((err: unknown) => {
        if (docsPage === null) logger.warn('documentation page not built (make docs): /docs answers 503');
        else logger.warn({ err: String(err) }, 'documentation page not compressed: /docs sends it uncompressed');
        resolve();
      });
    });
  let reading: Promise<void> | undefined;
  return async () => {
    await (reading ??= read());
    return docsPage;
  };
}
