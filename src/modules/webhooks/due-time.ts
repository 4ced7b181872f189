import type { Clock, CustomerClocks } from '../../clock.js';
import type { DueTime } from './repository.js';

/**
 * Now, for a delivery of this customer's: in the time of the test clock attached to it, with the clock's id, so that
 * only the clock's advances attempt it (docs/test-clocks.md); the server's otherwise.
 */
export async function deliveryNowOf(customerClocks: CustomerClocks, clock: Clock, customerId: string): Promise<DueTime> {
  const testClock = await customerClocks.testClockOf(customerId);
  return testClock ? { at: testClock.now.toISOString(), clockId: testClock.clockId } : { at: clock.now().toISOString(), clockId: null };
}
