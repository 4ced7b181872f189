import type { TestApp, TestCustomer } from './test-app.js';

/** Valid request bodies, to be varied one field at a time by tests. */

export const address = { line1: '1 Main Street', city: 'Berlin', postalCode: '10115', country: 'DE' };

export function individualBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', dob: '1990-12-10', address, ...overrides };
}

export function businessBody(overrides: Record<string, unknown> = {}, businessOverrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    business: {
      companyName: 'Analytical Engines Ltd',
      registrationNumber: 'HRB 12345',
      registrationDate: '2015-06-01',
      email: 'office@engines.example',
      incorporationCountry: 'DE',
      registeredAddress: address,
      ...businessOverrides,
    },
    businessPersons: [{ person: { firstName: 'Charles', lastName: 'Babbage', dob: '1971-12-26', email: 'charles@engines.example', address }, types: ['director', 'ubo'], ownership: 60 }],
    ...overrides,
  };
}

export async function createIndividual(t: TestApp, customer: TestCustomer, overrides: Record<string, unknown> = {}) {
  const response = await t.request({ method: 'POST', url: '/end-users', key: customer.key, csrf: true, body: individualBody(overrides) });
  if (response.statusCode !== 201) throw new Error(`POST /end-users answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: { id: string; status: string; [field: string]: unknown } }>().data;
}

export async function createBusiness(t: TestApp, customer: TestCustomer, overrides: Record<string, unknown> = {}, businessOverrides: Record<string, unknown> = {}) {
  const response = await t.request({ method: 'POST', url: '/end-users/businesses', key: customer.key, csrf: true, body: businessBody(overrides, businessOverrides) });
  if (response.statusCode !== 201) throw new Error(`POST /end-users/businesses answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: { id: string; status: string; [field: string]: unknown } }>().data;
}

export async function createFiatAccount(t: TestApp, customer: TestCustomer, body: Record<string, unknown> = { accountName: 'Main', currency: 'EUR' }) {
  const response = await t.request({ method: 'POST', url: '/fiat-accounts', key: customer.key, csrf: true, body });
  if (response.statusCode !== 201) throw new Error(`POST /fiat-accounts answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: { id: string; currency: string; is_master: boolean; [field: string]: unknown } }>().data;
}
