import { timestampYearMax } from './config/limits.js';

/**
 * Time comes from here, so tests can expire keys, tokens and quotes without sleeping (docs/architecture.md rule 7). Whatever
 * decides an answer reads this clock: expiry, TTLs, leases, the read caches and the in-memory rate-limit windows.
 * The wall clock (timers, performance.now) only paces and measures: timeouts of sockets and calls, the workers'
 * polling, durations for metrics and logs. Redis times its shared rate-limit windows itself.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A sandbox test clock attached to a customer (docs/test-clocks.md): its id and the customer's time it holds. */
export interface TestClockTime {
  readonly clockId: string;
  readonly now: Date;
}

/**
 * Each customer's time for the rules that follow test clocks (docs/test-clocks.md lists them): the time of the test
 * clock attached to the customer, if any; every other rule, and every customer without one, reads the server clock.
 */
export interface CustomerClocks {
  /** The customer's attached test clock; undefined: the customer runs on the server clock. */
  testClockOf(customerId: string): Promise<TestClockTime | undefined>;
  /** Work an advance runs before it answers: what fell due up to the clock's new time (fired in registration order). */
  onAdvance(work: (clock: TestClockTime) => Promise<unknown>): void;
  /**
   * Work a deleted clock leaves: what was due in its time goes back to the server clock, keeping its due time. Called
   * with the clock's id when it is deleted, and with null now and then for the rows of every clock that no longer
   * exists (storage/test-clock-rows.ts says how such rows come to be).
   */
  onDetach(work: (clockId: string | null) => Promise<unknown>): void;
}

/** Production has no test clocks: every customer runs on the server clock. */
export const serverTimeOnly: CustomerClocks = { testClockOf: async () => undefined, onAdvance: () => undefined, onDetach: () => undefined };

/** The customer's now: their test clock's time, or the server's. */
export async function customerNow(clocks: CustomerClocks, clock: Clock, customerId: string): Promise<Date> {
  return (await clocks.testClockOf(customerId))?.now ?? clock.now();
}

/** The customer's now and the test clock it is read from (null: the server's), for work kept due in the customer's time. */
export interface CustomerTime {
  readonly now: Date;
  readonly clockId: string | null;
}

export async function customerTimeOf(clocks: CustomerClocks, clock: Clock, customerId: string): Promise<CustomerTime> {
  const testClock = await clocks.testClockOf(customerId);
  return testClock ?? { now: clock.now(), clockId: null };
}

/** RFC 3339 date-time, as JSON Schema's `date-time` format accepts it: any case of T and Z, any fraction, ±hh[[:]mm]. */
const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;
const daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Facts of the calendar and the clock face (no limits of ours): the last hour, minute and second a time shows. */
const february = 2;
const daysInLeapFebruary = 29;
export const lastHourOfDay = 23;
export const lastMinuteOfHour = 59;
export const lastSecondOfMinute = 59;
/** A leap second is shown as the 61st second of its minute. */
const leapSecondOfMinute = 60;
const lastMinuteOfDay = lastHourOfDay * 60 + lastMinuteOfHour;
/** The range a timestamp is stored in: four-digit UTC years, so that the text sorts as time (docs/decisions/0001). */
const earliestMs = Date.parse('0000-01-01T00:00:00.000Z');
const latestMs = Date.UTC(timestampYearMax, 11, 31, 23, 59, 59, 999);

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/**
 * An RFC 3339 date-time → the docs/spec.md §2 form (UTC, milliseconds: `2026-01-31T10:00:00.000Z`), or undefined when it is
 * not one or falls outside the years 0000-9999 once in UTC. Written by hand because `new Date` refuses forms the
 * format allows (a leap second, `+02` offsets). Digits beyond the millisecond are cut, not rounded, so the order of
 * two timestamps never flips; a leap second (`23:59:60`) is read as the last millisecond of its minute.
 */
export function normalizeTimestamp(text: string): string | undefined {
  const match = rfc3339.exec(text);
  if (!match) return undefined;
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, fraction = '', zulu, sign, offsetHourText = '0', offsetMinuteText = '0'] = match;
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = Number(secondText);
  const offsetHours = Number(offsetHourText);
  const offsetMinutes = Number(offsetMinuteText);
  const monthDays = month === february && isLeapYear(year) ? daysInLeapFebruary : daysInMonth[month - 1];
  if (monthDays === undefined || day < 1 || day > monthDays) return undefined;
  if (hour > lastHourOfDay || minute > lastMinuteOfHour || second > leapSecondOfMinute || offsetHours > lastHourOfDay || offsetMinutes > lastMinuteOfHour) return undefined;
  const offsetMinutesSigned = zulu ? 0 : (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  const leapSecond = second === leapSecondOfMinute;
  // A leap second exists only as the last second of a UTC day.
  const utcMinuteOfDay = (((hour * 60 + minute - offsetMinutesSigned) % 1440) + 1440) % 1440;
  if (leapSecond && utcMinuteOfDay !== lastMinuteOfDay) return undefined;
  const milliseconds = leapSecond ? 999 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const offsetMs = offsetMinutesSigned * 60_000;
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  const local = new Date(Date.UTC(2000, month - 1, day, hour, minute, leapSecond ? 59 : second, milliseconds));
  local.setUTCFullYear(year);
  const utcMs = local.getTime() - offsetMs;
  if (Number.isNaN(utcMs) || utcMs < earliestMs || utcMs > latestMs) return undefined;
  return new Date(utcMs).toISOString();
}
