import type { Providers } from '../../src/providers/providers.js';
import { sandboxProviders } from '../../src/providers/providers.js';
import { addressObjectId } from '../../src/providers/custody.js';

/**
 * The sandbox providers, recording which objects exist at the provider: created by a call, gone once undone. An
 * object alive at the provider with no row that records it is what a failed request must never leave behind.
 * `before` runs ahead of every creating call (to fail it, or to act in the middle of a request).
 */
export class RecordingProviders {
  readonly live = new Set<string>();
  readonly calls: string[] = [];
  before: (call: string, idempotencyKey: string) => Promise<void> = async () => undefined;
  readonly providers: Providers;

  constructor() {
    const sandbox = sandboxProviders();
    const created = <T>(call: string, key: string, work: () => Promise<T>, idOf: (result: T) => string) => async () => {
      this.calls.push(call);
      await this.before(call, key);
      const result = await work();
      this.live.add(idOf(result));
      return result;
    };
    const removed = (id: string) => {
      this.calls.push(`undo ${id}`);
      this.live.delete(id);
      return Promise.resolve();
    };
    this.providers = {
      banking: {
        openAccount: (request, key) => created('openAccount', key, () => sandbox.banking.openAccount(request, key), (r) => r.frAccountId)(),
        closeAccount: removed,
        openVirtualAccount: (request, key) => created('openVirtualAccount', key, () => sandbox.banking.openVirtualAccount(request, key), (r) => r.frVirtualAccountId)(),
        closeVirtualAccount: removed,
        registerPayee: (request, key) => created('registerPayee', key, () => sandbox.banking.registerPayee(request, key), (r) => r.frPayeeId)(),
        removePayee: removed,
      },
      kyc: {
        registerEndUser: (request, key) => created('registerEndUser', key, () => sandbox.kyc.registerEndUser(request, key), (r) => r.frEndUserId)(),
        removeEndUser: removed,
        uploadDocument: (upload) => sandbox.kyc.uploadDocument(upload),
      },
      custody: {
        createWallet: (request, key) => created('createWallet', key, () => sandbox.custody.createWallet(request, key), (r) => r.frWalletId)(),
        archiveWallet: removed,
        createAddress: (request, key) => created('createAddress', key, () => sandbox.custody.createAddress(request, key), (r) => addressObjectId(r))(),
        retireAddress: (address) => removed(addressObjectId(address)),
      },
      otc: sandbox.otc,
    };
  }
}
