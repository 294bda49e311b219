// The 2.6 MB Redoc page (/docs), read once in the background and served from memory; its gzip and br encodings are made
// at the first /docs request (sent uncompressed until they exist). Made at start they cost 0.2-0.4 s of CPU, and
// their working memory stayed resident: +15-17 MB RSS measured, for a page most processes never serve.
import { loadDocsPage, type DocsPage } from '../../adapters/files/docs-page.js';
import type { Logger } from '../../http/logging.js';
import { projectPath } from '../../http/spec.js';

/** The page once read (null before, or when it is not built); the first call starts its compression. */
export function docsPageInBackground(logger: Logger): () => DocsPage | null {
  let docsPage: DocsPage | null = null;
  let compressDocs!: () => void;
  const compressWhen = new Promise<void>((resolve) => (compressDocs = resolve));
  loadDocsPage(projectPath('dist/docs/index.html'), (page) => (docsPage = page), { compressWhen }).catch((err: unknown) =>
    docsPage === null
      ? logger.warn('documentation page not built (make docs): /docs answers 503')
      : logger.warn({ err: String(err) }, 'documentation page not compressed: /docs sends it uncompressed'),
  );
  return () => {
    compressDocs();
    return docsPage;
  };
}
