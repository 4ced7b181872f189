import { descriptorCacheEntriesMax } from '../../config/limits.js';
import { notFound } from '../../errors.js';
import type { ExpiringCache, ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';

/**
 * Which customer a wallet belongs to, as the money paths need it: a wallet is never deleted nor given to another
 * customer, so a known (customer, wallet) pair is remembered for the process and a transfer costs no lookup.
 */
export class WalletOwnership {
  private readonly owned: ExpiringCache<string, string>;

  constructor(
    private readonly storage: Storage,
    caches: ReadCaches,
  ) {
    this.owned = caches.named('wallet-owners', undefined, descriptorCacheEntriesMax);
  }

  /** The wallet's id (lower case) when it is the customer's; another customer's wallet answers 404 like an unknown one. */
  async require(customerId: string, walletId: string): Promise<string> {
    const id = walletId.toLowerCase();
    const found = await this.owned.getOrLoad(`${customerId}|${id}`, async () => {
      const row = await this.storage.db.selectFrom('wallets').select('id').where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
      return row?.id;
    });
    if (found === undefined) throw notFound('wallet');
    return found;
  }
}
