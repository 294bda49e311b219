// The dates of the IP list files (hosting ranges, hosting ASNs, Tor exits): a `# date: YYYY-MM-DD` line of their own.
import { stat } from 'node:fs/promises';

const DATE_LINE = /^#\s*date:\s*(\d{4}-\d{2}-\d{2})\s*$/im;

/** The data's date: the file's `# date:` line, else the file's modification day. */
export async function dateOf(path: string, text: string): Promise<string> {
  return DATE_LINE.exec(text)?.[1] ?? (await stat(path)).mtime.toISOString().slice(0, 10);
}
