// The Redoc page of GET /docs held in memory with its gzip and br encodings (RFC 9110 §8.4.1 content codings).
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * The page (2.6 MB) read once (the service reads it at its first request): serving it from memory opens no file per
 * request after that read, so no request, however it ends, can leave one open. gzip and br are null until compressed.
 */
export interface DocsPage {
  identity: Buffer;
  gzip: Buffer | null;
  br: Buffer | null;
}

/**
 * Brotli quality 5: nearly quality 11's size in a small fraction of its time, and smaller than gzip
 * (docs/adr/0012). Each process compresses in libuv's thread pool (never on the event loop).
 */
const BROTLI_QUALITY = 5;

export interface DocsPageOptions {
  /**
   * Compression waits for this (default: starts at once, after the read). The service reads the page at the first /docs
   * request: made at start, both encodings cost CPU and left compressor working memory resident in every
   * process, whether or not it ever served /docs (docs/adr/0012-keys-on-demand.md).
   */
  compressWhen?: Promise<void>;
}

/** Both encodings of `identity`, made in the thread pool. */
async function compressDocsPage(identity: Buffer): Promise<DocsPage> {
  const [gz, br] = await Promise.all([
    gzipAsync(identity, { level: constants.Z_BEST_COMPRESSION }),
    brotliAsync(identity, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
      },
    }),
  ]);
  return { identity, gzip: gz, br };
}

/**
 * Read the page and publish it, then publish it again with both encodings once they are made (off the event
 * loop, once `compressWhen` settles). Rejects when the page cannot be read; a failed compression leaves the
 * identity page published.
 */
export async function loadDocsPage(path: string, publish: (page: DocsPage) => void, opts: DocsPageOptions = {}): Promise<void> {
  const identity = await readFile(path);
  publish({ identity, gzip: null, br: null });
  await opts.compressWhen;
  publish(await compressDocsPage(identity));
}
