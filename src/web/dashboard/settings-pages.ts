import type { FastifyInstance } from 'fastify';
import { customerDisplayNameLengthMax, customerLogoUrlLengthMax } from '../../config/limits.js';
import { FormState, formOf, formText, refusedForm, type FieldLabels } from '../form.js';
import { pageRoute } from '../page-route.js';
import { redirectWithNotice } from './notices.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

const settingsLabels: FieldLabels = {
  display_name: { label: 'Display name', paths: ['/display_name'] },
  logo_url: { label: 'Logo URL', paths: ['/logo_url'] },
};

/** Settings: how the customer's hosted onboarding page names it and the logo it shows (docs/dashboard.md "Settings"). */
export function settingsPages(context: FastifyInstance, services: WebServices): void {
  const limits = { displayNameLengthMax: customerDisplayNameLengthMax, logoUrlLengthMax: customerLogoUrlLengthMax, logoOrigins: services.config.onboardingLogoOrigins };

  context.get('/settings', pageRoute, async (request, reply) => {
    const customerId = request.dashboard!.customerId;
    const [customer, branding] = await Promise.all([services.customers.get(customerId), services.customers.branding(customerId)]);
    // The form shows what is stored.
    const form = new FormState({ display_name: branding.display_name ?? '', logo_url: branding.logo_url ?? '' });
    return renderPage(services, request, reply, '/dashboard/settings', 'Settings', { form, customerName: customer?.name ?? '', ...limits });
  });

  context.post('/settings', pageRoute, async (request, reply) => {
    const customerId = request.dashboard!.customerId;
    const sent = formOf(request.body);
    try {
      await services.customers.setBranding(customerId, { displayName: formText(sent, 'display_name') ?? '', logoUrl: formText(sent, 'logo_url') ?? '' }, services.config.onboardingLogoOrigins);
    } catch (error) {
      const refused = refusedForm(error, sent, settingsLabels);
      if (!refused) throw error;
      const customer = await services.customers.get(customerId);
      const { status, ...shown } = refused;
      return renderPage(services, request, reply, '/dashboard/settings', 'Settings', { ...shown, customerName: customer?.name ?? '', ...limits }, status);
    }
    return redirectWithNotice(services, request, reply, '/dashboard/settings', 'Saved: your hosted onboarding pages show it from now on.');
  });
}
