import type { Clock } from '../../src/clock.js';

/** A clock tests move by hand, to expire keys and tokens without sleeping. */
export class TestClock implements Clock {
  private current: number;
  constructor(start: Date | string = new Date()) {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(milliseconds: number): void {
    this.current += milliseconds;
  }
  set(to: Date | string): void {
    this.current = new Date(to).getTime();
  }
}
