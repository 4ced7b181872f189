/** Time comes from here, so tests can expire keys, tokens and quotes without sleeping (DESIGN §4 rule 7). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with milliseconds, the timestamp format of spec §2. */
export function isoTimestamp(date: Date): string {
  return date.toISOString();
}
