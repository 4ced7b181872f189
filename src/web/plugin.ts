import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { dashboardFormBytesMax } from '../config/limits.js';
import { assetRoutes } from './assets.js';
import { accountPages } from './dashboard/account-pages.js';
import { apiKeyPages } from './dashboard/api-key-pages.js';
import { endUserPages } from './dashboard/end-user-pages.js';
import { installIdCheck } from './dashboard/ids.js';
import { transactionPages } from './dashboard/transaction-pages.js';
import { webhookPages } from './dashboard/webhook-pages.js';
import { otcPages } from './dashboard/otc-pages.js';
import { overviewPages } from './dashboard/overview-pages.js';
import { payeePages } from './dashboard/payee-pages.js';
import { layoutData } from './dashboard/render.js';
import type { WebServices } from './dashboard/services.js';
import { revealPages } from './dashboard/reveal-pages.js';
import { installSessionGuard } from './dashboard/session.js';
import { settingsPages } from './dashboard/settings-pages.js';
import { signInPages } from './dashboard/sign-in-pages.js';
import { refuseJsonBodies } from './form.js';
import { registerOnboardingPages } from './onboarding/pages.js';
import { installPageErrors } from './page-errors.js';
import { installPageHeaders } from './page-headers.js';
import { installViews } from './views.js';

/**
 * The browser pages (docs/dashboard.md), each in its own encapsulated context so that nothing here — form bodies,
 * cookies, HTML errors — reaches the JSON API: the customer dashboard under /dashboard (session cookies, never API
 * keys) and the hosted onboarding page under /onboarding (its URL token, nothing else).
 */
export async function registerWebPages(app: FastifyInstance, services: WebServices): Promise<void> {
  await app.register(async (context) => assetRoutes(context));

  await app.register(
    async (context) => {
      await installViews(context);
      installPageHeaders(context);
      installPageErrors(context, '/dashboard', (request) => layoutData(services, request));
      await context.register(cookie);
      refuseJsonBodies(context);
      await context.register(formbody, { bodyLimit: dashboardFormBytesMax });
      installSessionGuard(context, services);
      installIdCheck(context);
      signInPages(context, services);
      overviewPages(context, services);
      revealPages(context, services);
      apiKeyPages(context, services);
      accountPages(context, services);
      transactionPages(context, services);
      endUserPages(context, services);
      payeePages(context, services);
      otcPages(context, services);
      webhookPages(context, services);
      settingsPages(context, services);
    },
    { prefix: '/dashboard' },
  );

  await registerOnboardingPages(app, services);
}
