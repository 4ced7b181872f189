import { lastHourOfDay, lastMinuteOfHour, lastSecondOfMinute } from '../../clock.js';
import { InvalidInputError } from '../customers/index.js';

/**
 * A key's expiry must be an ISO 8601 date or date-time with a time zone. ApiKeyService parses it with `new Date`,
 * which also takes "1" (the year 2001) and rolls an impossible date such as 2030-02-30 over to March 2: an
 * operator's typo silently became another expiry (test/cli/cli.test.ts). The CLI and the dashboard check it here
 * first.
 */
const isoDateTime = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

export function checkExpiresAt(value: string): string {
  const match = isoDateTime.exec(value.trim());
  const parsed = new Date(value.trim());
  const [, year, month, day, hour = '00', minute = '00', second = '00'] = match ?? [];
  const calendarDate = match ? new Date(Date.UTC(Number(year), Number(month) - 1, Number(day))) : undefined;
  if (
    !match ||
    Number.isNaN(parsed.getTime()) ||
    calendarDate?.getUTCMonth() !== Number(month) - 1 ||
    calendarDate.getUTCDate() !== Number(day) ||
    Number(hour) > lastHourOfDay ||
    Number(minute) > lastMinuteOfHour ||
    Number(second) > lastSecondOfMinute
  ) {
    throw new InvalidInputError(`--expires-at "${value.slice(0, 40)}" is not an ISO 8601 date-time (e.g. 2030-01-31T23:59:59Z)`);
  }
  return value.trim();
}
