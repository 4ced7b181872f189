import { Type, type Static } from 'typebox';
import { testClockNameLengthMax } from '../../config/limits.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';

export const TestClock = Type.Object(
  {
    id: Uuid,
    name: Nullable(Type.String()),
    frozen_time: Type.String({ format: 'date-time', description: "The customer's time while the clock is attached: only an advance moves it" }),
    created_at: Timestamp,
  },
  { title: 'TestClock', additionalProperties: false },
);
export type TestClockRecord = Static<typeof TestClock>;

export const CreateTestClockBody = Type.Object(
  {
    frozen_time: Type.Optional(Type.String({ format: 'date-time', description: 'Default: now' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: testClockNameLengthMax })),
  },
  { title: 'CreateTestClockRequest', additionalProperties: false, examples: [{ name: 'Settlement walk-through', frozen_time: '2026-01-31T10:00:00.000Z' }] },
);
export type CreateTestClockInput = Static<typeof CreateTestClockBody>;

export const AdvanceTestClockBody = Type.Object(
  { to: Type.String({ format: 'date-time', description: "After the clock's frozen_time, at most 60 days after it" }) },
  { title: 'AdvanceTestClockRequest', additionalProperties: false, examples: [{ to: '2026-01-31T10:00:31.000Z' }] },
);

export const TestClockParams = Type.Object({ id: Uuid }, { additionalProperties: false });
