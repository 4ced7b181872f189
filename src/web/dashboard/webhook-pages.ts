import type { FastifyInstance } from 'fastify';
import type { WebServices } from './services.js';

/** Placeholder: the pages of this section are being built (docs/dashboard.md). */
export function webhookPages(_context: FastifyInstance, _services: WebServices): void {}
