import v8 from 'node:v8';
import { startupHeapGrowingPercent, startupHeapGrowthFixedAfterListenMs } from './config/limits.js';

/**
 * Keeps V8 from sizing the old generation for start-up's allocation rate (docs/operations.md "Memory"). After each
 * full collection V8 lets the old generation grow by a factor it derives from how fast the program promoted objects
 * there in the last seconds; start-up (compiling code and schemas) does so fast, so the first full collection after
 * it set a limit of four times what it kept, and a load reached that limit before the next collection: the server's
 * peak. From start-up until a while after the server listens the factor is fixed at a modest one; then V8 decides
 * again, from the load's own rate, which is low now that requests leave next to nothing in the old generation.
 * Only the server process does this: tests build many apps in one process.
 */
export function growHeapSlowlyDuringStartUp(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${startupHeapGrowingPercent}`);
}

/** Called once the server listens: once start-up has left V8's measuring window, V8's own factor returns. */
export function restoreHeapGrowthAfterStartUp(): void {
  // 0 means "not set": V8 derives the factor itself, as without the flag. The limit the last collection set stays.
  setTimeout(() => v8.setFlagsFromString('--heap-growing-percent=0'), startupHeapGrowthFixedAfterListenMs).unref();
}
