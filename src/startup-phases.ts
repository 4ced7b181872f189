/**
 * When each phase of start-up ended, in milliseconds since the process started (performance.now()), so the "ready"
 * log line says where a slow start spent its time (docs/operations.md "Start-up"). Only the server process records:
 * tests build many apps in one process and would pile the entries up.
 */
const phases: Array<[name: string, atMs: number]> = [];
let recording = false;

export function recordStartupPhases(): void {
  recording = true;
}

/** Notes that `name` has just finished (a no-op unless the server process asked for it). */
export function startupPhaseDone(name: string): void {
  if (recording) phases.push([name, Math.round(performance.now())]);
}

/** The phases so far as `{ name: ms since start }`, in order; recording stops. */
export function startupPhases(): Record<string, number> {
  recording = false;
  return Object.fromEntries(phases.splice(0));
}
