import { Type, type Static } from 'typebox';
import { eventTypeLengthMax, pageLimitDefault, pageLimitMax, pageMax } from '../../config/limits.js';
import { Timestamp, Uuid } from '../../http/schemas.js';

/** The body of every webhook delivery, and of GET /events. */
export const Event = Type.Object(
  { id: Uuid, type: Type.String(), created_at: Timestamp, data: Type.Unknown({ description: 'The resource’s record as the API returned it at the moment of the event' }) },
  { title: 'Event', additionalProperties: false },
);
export type EventRecord = Static<typeof Event>;

export const EventParams = Type.Object({ eventId: Uuid }, { additionalProperties: false });

export const EventsQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: pageMax, default: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, default: pageLimitDefault, description: `Clamped to ${pageLimitMax}` })),
    type: Type.Optional(Type.String({ minLength: 1, maxLength: eventTypeLengthMax, description: 'Only events of this type' })),
  },
  { additionalProperties: false },
);
