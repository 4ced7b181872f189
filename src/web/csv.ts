/**
 * CSV as RFC 4180 writes it (CRLF line ends; a field holding a comma, a double quote or a line break quoted, its
 * quotes doubled), safe to open in a spreadsheet: a cell a spreadsheet would run as a formula — starting with
 * `=`, `+`, `-`, `@`, a tab or a carriage return — is written with a leading `'` (OWASP "CSV injection"), so a
 * reference such as `=HYPERLINK(…)` typed by a payer shows as text.
 */
const formulaStart = /^[=+\-@\t\r]/;
const needsQuotes = /[",\r\n]/;

function csvCell(value: string | number | null | undefined): string {
  const text = value === null || value === undefined ? '' : String(value);
  const safe = formulaStart.test(text) ? `'${text}` : text;
  return needsQuotes.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One record as a CSV line, CRLF included. */
export function csvLine(cells: ReadonlyArray<string | number | null | undefined>): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
