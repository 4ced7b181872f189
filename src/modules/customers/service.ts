import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { customerNameLengthMax } from '../../config/limits.js';
import type { Storage } from '../../storage/database.js';
import { providerId } from '../../providers/provider-ids.js';
import { findCustomer, insertCustomer, type CustomerRow } from './repository.js';

export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}

/** Operator-side customer management (the CLI); customers are not created through the public API. */
export class CustomerService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async create(name: string): Promise<CustomerRow> {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > customerNameLengthMax) {
      throw new InvalidInputError(`--name must be 1-${customerNameLengthMax} characters`);
    }
    const row: CustomerRow = {
      id: newId(),
      name: trimmed,
      fr_owner_business_id: providerId('busi'),
      created_at: this.clock.now().toISOString(),
    };
    await insertCustomer(this.storage.db, row);
    return row;
  }

  async get(id: string): Promise<CustomerRow | undefined> {
    return findCustomer(this.storage.db, id.toLowerCase());
  }
}
