// CSV (RFC 4180): reading one column of an uploaded list, and writing result rows that spreadsheets read as data.

/** A CSV text that cannot be read: what is wrong and on which line (1-based). */
export class CsvError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/**
 * The rows of a CSV text (RFC 4180 §2: fields in double quotes may hold commas, quotes doubled and line breaks; CRLF
 * or LF ends a record). A leading UTF-8 byte order mark is dropped; blank lines are skipped.
 */
function* csvRows(text: string): Generator<{ fields: string[]; line: number }> {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < text.length) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q < 0) throw new CsvError('a quoted field is not closed', start);
          field += text.slice(i, q);
          for (let k = i; k < q; k++) if (text[k] === '\n') line++;
          i = q + 1;
          if (text[i] !== '"') break;
          field += '"';
          i++;
        }
        if (i < text.length && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') throw new CsvError('text after a closing quote', line);
      } else {
        let end = i;
        while (end < text.length && text[end] !== ',' && text[end] !== '\n' && text[end] !== '\r') end++;
        field = text.slice(i, end);
        i = end;
      }
      fields.push(field);
      if (text[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') i++;
    line++;
    if (fields.length === 1 && fields[0] === '') continue;
    yield { fields, line: start };
  }
}

/** The addresses of an uploaded list: the column named `column` (case-insensitive) in the header row, else the first. */
export function csvColumn(text: string, column: string): string[] {
  const out: string[] = [];
  let at = -1;
  for (const { fields, line } of csvRows(text)) {
    if (at < 0) {
      const named = fields.findIndex((f) => f.trim().toLowerCase() === column);
      at = named < 0 ? 0 : named;
      continue;
    }
    if (at >= fields.length) throw new CsvError(`the row has no column ${at + 1}`, line);
    out.push(fields[at].trim());
  }
  return out;
}

/** A cell a spreadsheet would run as a formula (OWASP "CSV injection"): =, +, -, @, tab, carriage return first. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell: a formula start defused with a leading quote; quoted when it holds a comma, quote or line break. */
function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, CRLF-terminated (RFC 4180 §2.1). */
export const csvRecord = (cells: ReadonlyArray<string | number | boolean | null>): string => `${cells.map(csvCell).join(',')}\r\n`;
