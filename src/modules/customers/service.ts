import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { customerDisplayNameLengthMax, customerLogoUrlLengthMax, customerNameLengthMax, pageLimitMax } from '../../config/limits.js';
import type { Kysely } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import { providerId } from '../../providers/provider-ids.js';
import { validationError, type FieldError } from '../../errors.js';
import { findCustomer, findCustomerBranding, findCustomerByName, insertCustomer, listCustomers, updateCustomerBranding, type CustomerBranding, type CustomerRow } from './repository.js';

export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}

/** Several things wrong with one input at once (the CLI prints them in one line; a form shows each by its field). */
export class InvalidInputErrors extends InvalidInputError {
  constructor(readonly problems: readonly InvalidInputError[]) {
    super(problems.map((problem) => problem.message).join('; '));
  }
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > customerNameLengthMax) {
    throw new InvalidInputError(`--name must be 1-${customerNameLengthMax} characters`);
  }
  return trimmed;
}

/** Operator-side customer management (the CLI); customers are not created through the public API. */
/**
 * A customer by its id (stored lower case), for the modules that act for one (their keys, users, fee schedules,
 * provider calls); undefined when there is none. `db` is the caller's: a transaction reads its own writes.
 */
export async function findCustomerById(db: Kysely<Database>, id: string): Promise<CustomerRow | undefined> {
  return findCustomer(db, id);
}

/** What a customer may set of its branding: both optional (empty: none). */
export interface BrandingInput {
  displayName?: string;
  logoUrl?: string;
}

/**
 * The branding as stored, every problem found at once: a display name of one line within its bound; a logo URL that
 * is https, on one of the allowed origins (ONBOARDING_LOGO_ORIGINS: the page's policy loads images from that origin
 * only), without credentials, within its bound.
 */
function checkedBranding(input: BrandingInput, logoOrigins: readonly string[]): CustomerBranding {
  const problems: FieldError[] = [];
  const displayName = input.displayName?.trim() ?? '';
  if (displayName.length > customerDisplayNameLengthMax) problems.push({ location: 'body', path: '/display_name', reason: `must be at most ${customerDisplayNameLengthMax} characters` });
  else if (/\p{Cc}/u.test(displayName)) problems.push({ location: 'body', path: '/display_name', reason: 'must be one line of text, without control characters' });
  const logoText = input.logoUrl?.trim() ?? '';
  let logoUrl: string | null = null;
  if (logoText !== '') {
    const url = URL.canParse(logoText) ? new URL(logoText) : undefined;
    const allowed = logoOrigins.length === 0 ? 'no logo host is allowed on this server (ONBOARDING_LOGO_ORIGINS)' : `must be on ${logoOrigins.join(' or ')}`;
    if (logoText.length > customerLogoUrlLengthMax) problems.push({ location: 'body', path: '/logo_url', reason: `must be at most ${customerLogoUrlLengthMax} characters` });
    else if (!url || url.protocol !== 'https:') problems.push({ location: 'body', path: '/logo_url', reason: 'must be an https URL' });
    else if (url.username !== '' || url.password !== '') problems.push({ location: 'body', path: '/logo_url', reason: 'must not carry a user name or password' });
    else if (!logoOrigins.includes(url.origin)) problems.push({ location: 'body', path: '/logo_url', reason: allowed });
    else logoUrl = url.href;
  }
  if (problems.length > 0) throw validationError(problems, 'The settings are not valid.');
  return { display_name: displayName === '' ? null : displayName, logo_url: logoUrl };
}

export class CustomerService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async create(name: string): Promise<CustomerRow> {
    const row: CustomerRow = {
      id: newId(),
      name: checkedName(name),
      fr_owner_business_id: providerId('busi'),
      created_at: this.clock.now().toISOString(),
    };
    await insertCustomer(this.storage.db, row);
    return row;
  }

  async get(id: string): Promise<CustomerRow | undefined> {
    return findCustomer(this.storage.db, id.toLowerCase());
  }

  /** How the customer's hosted onboarding page presents it: display name and logo, each null when not set. */
  async branding(id: string): Promise<CustomerBranding> {
    return (await findCustomerBranding(this.storage.db, id.toLowerCase())) ?? { display_name: null, logo_url: null };
  }

  /** Sets the branding (the dashboard's settings); refused with every problem at once, nothing written. */
  async setBranding(id: string, input: BrandingInput, logoOrigins: readonly string[]): Promise<CustomerBranding> {
    const branding = checkedBranding(input, logoOrigins);
    await updateCustomerBranding(this.storage.db, id.toLowerCase(), branding);
    return branding;
  }

  /** The oldest customer of this name (trimmed, exact), if any. */
  async findByName(name: string): Promise<CustomerRow | undefined> {
    return findCustomerByName(this.storage.db, checkedName(name));
  }

  /** A page of all customers, newest first (pages are 1-based, the size clamped as the API's), in the API's list shape. */
  async list(page: number, limit: number): Promise<{ data: CustomerRow[]; meta: { pagination: { page: number; limit: number; total: number } } }> {
    const size = Math.min(limit, pageLimitMax);
    const { rows, total } = await listCustomers(this.storage.db, (page - 1) * size, size);
    return { data: rows, meta: { pagination: { page, limit: size, total: Number(total) } } };
  }
}
