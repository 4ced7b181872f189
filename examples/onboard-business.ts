// Onboards a business with its two directors, and (sandbox) decides its verification.
// Run: CUSTOMER_API_KEY=… node examples/onboard-business.ts
import { clientFromEnv } from './client.ts';

const api = clientFromEnv();
const director = (firstName: string, lastName: string, dob: string) => ({
  person: {
    firstName,
    lastName,
    dob,
    email: `${firstName.toLowerCase()}@mueller-logistik.example`,
    address: { line1: 'Hauptstraße 12', city: 'Berlin', postalCode: '10115', country: 'DE' },
  },
  types: ['director' as const],
});

const { data: business } = await api.createBusinessEndUser({
  body: {
    business: {
      companyName: 'Müller Logistik GmbH',
      registrationNumber: 'HRB 123456',
      registrationDate: '2015-06-01',
      email: 'finance@mueller-logistik.example',
      incorporationCountry: 'DE',
      registeredAddress: { line1: 'Hauptstraße 12', city: 'Berlin', postalCode: '10115', country: 'DE' },
    },
    businessPersons: [director('Anna', 'Müller', '1980-02-14'), director('Jonas', 'Weber', '1976-11-03')],
  },
});
console.log(`created business ${business.id}: ${business.status}`);

// In production the provider decides; the sandbox lets you decide.
await api.sandboxDecideEndUserVerification({ params: { path: { endUserId: business.id } }, body: { outcome: 'verified' } });
const { data: verified } = await api.getEndUser({ params: { path: { endUserId: business.id } } });
console.log(`business ${verified.id} is ${verified.status}`);
