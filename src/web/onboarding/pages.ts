import type { FastifyInstance } from 'fastify';
import type { WebServices } from '../dashboard/services.js';

/** Placeholder: the hosted onboarding page is being built (docs/dashboard.md "Hosted onboarding"). */
export async function registerOnboardingPages(_app: FastifyInstance, _services: WebServices): Promise<void> {}
