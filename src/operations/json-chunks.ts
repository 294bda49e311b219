// A bulk answer's JSON text (RFC 8259) in paced chunks: the same bytes JSON.stringify writes, without one long turn.
import { pace } from './pacing.js';

/** Results serialised at a time: a few tens of KiB of text, well under a millisecond of work. */
const RESULTS_PER_CHUNK = 50;

/**
 * `{"results":[...]}` as JSON.stringify would write it, chunk by chunk, pacing between chunks (pacing.ts): a 1,000-item
 * email answer is ~0.4 MB of text, and serialising and writing it in one piece held the event loop for milliseconds
 * (docs/adr/0036), every other request waiting behind it.
 */
export async function* resultsJson(results: readonly unknown[]): AsyncGenerator<string> {
  let text = '{"results":[';
  for (let i = 0; i < results.length; i += RESULTS_PER_CHUNK) {
    const part = results.slice(i, i + RESULTS_PER_CHUNK).map((r) => JSON.stringify(r));
    text += (i === 0 ? '' : ',') + part.join(',');
    yield text;
    text = '';
    await pace();
  }
  yield `${text}]}`;
}
