import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../errors.js';

/** Every record a dashboard address names has a UUID, as the API's ids (http/schemas.ts Uuid). */
const uuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Whether a text can be a record's id (a search box takes an id as well as words). */
export function isRecordId(text: string): boolean {
  return uuidPattern.test(text);
}

/**
 * An id taken from an address (path or query), or the 404 page when it cannot name a record. Such a text never
 * reaches the database: the API's schemas keep it out there, and PostgreSQL fails on some (a NUL byte) where
 * SQLite finds nothing — a 500 on one database, a 404 on the other.
 */
function addressId(text: string): string {
  if (!uuidPattern.test(text)) throw new DomainError('NOT_FOUND', 'There is nothing at this address, or it is not yours to see.');
  return text;
}

/** Checks the id parameters of every dashboard route (`id`, `…Id`) after the session and form token, before its handler. */
export function installIdCheck(context: FastifyInstance): void {
  context.addHook('preHandler', async (request) => {
    for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
      if ((name === 'id' || name.endsWith('Id')) && typeof value === 'string') addressId(value);
    }
  });
}
