import v8 from 'node:v8';
import { heapGrowingPercent } from './config/limits.js';

/**
 * Keeps V8 from sizing the old generation for a burst (docs/operations.md "Memory"). After each full collection V8
 * lets the old generation grow by a factor it derives from how fast the program promoted objects there in the last
 * seconds: start-up (compiling code and schemas) and a burst of webhook deliveries (hundreds of attempts in flight,
 * each surviving scavenges while it waits for its receiver and its record) promote fast, so V8 chose its largest
 * factor, 4, and the old generation filled with dead objects to four times what it kept before the next collection:
 * the server's peak. The factor is fixed at a modest one from the process's start, for its whole life. Only the
 * server process does this: tests build many apps in one process.
 */
export function fixHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
}
