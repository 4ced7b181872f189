/**
 * Times as a person reads them (docs/dashboard.md "How amounts and times read"). The server writes them in UTC —
 * it does not know the viewer's zone — and src/web/assets/pages.js rewrites each `<time>` into the browser's zone;
 * without JavaScript the UTC text stays, and says so. The exact instant stays in `datetime` and in the title.
 */

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const twoDigits = (value: number) => String(value).padStart(2, '0');

/** `2026-11-26T19:24:07.123Z` → `26 Nov 2026, 19:24 UTC`; a text that is no time is shown as it is. */
export function timeText(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.getUTCDate()} ${months[at.getUTCMonth()]} ${at.getUTCFullYear()}, ${twoDigits(at.getUTCHours())}:${twoDigits(at.getUTCMinutes())} UTC`;
}

/** The exact instant, for the title: `2026-11-26 19:24:07.123 UTC`. */
export function exactTimeText(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.toISOString().replace('T', ' ').replace('Z', '')} UTC`;
}

/** The `datetime` attribute: the instant in UTC as ISO 8601, whatever offset the text had. */
export function machineTime(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toISOString();
}
