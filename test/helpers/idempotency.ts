import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/**
 * What concurrent requests with one Idempotency-Key may answer: the operation's answer (identical for every one
 * that got it, the first and the replays) or 409 IDEMPOTENCY_KEY_IN_USE with Retry-After while the first runs.
 */
export function expectOneAnswerOr409(responses: readonly LightMyRequestResponse[], status = 201): void {
  expect(responses.every((response) => response.statusCode === status || response.statusCode === 409)).toBe(true);
  const answered = responses.filter((response) => response.statusCode === status);
  expect(answered.length).toBeGreaterThanOrEqual(1);
  for (const response of answered) expect(response.body).toBe(answered[0]!.body);
  for (const response of responses.filter((candidate) => candidate.statusCode === 409)) {
    expect(response.json<{ error: { code: string } }>().error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(response.headers['retry-after']).toBe('1');
  }
}
