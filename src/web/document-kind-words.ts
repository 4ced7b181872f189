import type { DocumentKind } from '../modules/documents/index.js';

/** Identity document kinds as a person reads them, on the dashboard and the hosted onboarding page. */
export const documentKindWords: Record<DocumentKind, string> = {
  passport: 'Passport',
  national_id: 'National ID card',
  driving_licence: 'Driving licence',
  residence_permit: 'Residence permit',
};
