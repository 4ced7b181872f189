import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { customerNameLengthMax, pageLimitMax } from '../../config/limits.js';
import type { Kysely } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import { providerId } from '../../providers/provider-ids.js';
import { findCustomer, findCustomerByName, insertCustomer, listCustomers, type CustomerRow } from './repository.js';

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
