import type { Network } from '../../ledger/networks.js';
import type { KeyedAnswer } from '../../ledger/unit-of-work.js';
import type { ProviderEventInbox } from '../inbox.js';
import { providerId } from '../provider-ids.js';
import { sandboxTransactionHash } from './custody.js';
import { sandboxProviderName } from './name.js';

/** A bank transfer arriving at an account, as the simulated bank reports it (`deposit.received`). */
export interface IncomingBankTransfer {
  /** The account credited: its fr_account_id, or a virtual account's fr_virtual_account_id. */
  account: string;
  /** Decimal string in the account's currency: "12.34". */
  amount: string;
  currency: string;
  reference?: string;
  counterpartyName?: string;
}

/** Crypto arriving at a wallet's address, as the simulated custodian reports it (`wallet_deposit.received`). */
export interface IncomingChainTransfer {
  address: string;
  asset: string;
  network: Network;
  /** Decimal string in the asset: "1.500000". */
  amount: string;
}

/**
 * Money arriving from outside, as the simulated bank and custodian see it (POST /sandbox/fiat-accounts/{id}/deposits,
 * POST /sandbox/wallets/{id}/deposits, the dashboard's deposit forms). Each arrival is reported as a provider event
 * under the provider's own new id of the incoming transfer, applied at once through the inbox by the deposit
 * lifecycle of its kind (modules/deposits/lifecycle.ts, modules/wallets/deposits.ts), which answers the record and
 * stores the request's answer with the money; the sandbox moves no money itself. The request is the arrival here, so
 * the event is the request's (inbox.reportForRequest): a request that fails credits nothing, now or later. A real
 * bank or custodian reports the same events from its webhook route.
 */
export class SandboxDeposits {
  constructor(private readonly inbox: ProviderEventInbox) {}

  /** Money credited to an account. */
  bankTransfer(transfer: IncomingBankTransfer, answer?: KeyedAnswer): Promise<unknown> {
    const reference = providerId('txn');
    return this.inbox.reportForRequest({ provider: sandboxProviderName, type: 'deposit.received', reference, idempotencyKey: `simulation:${reference}`, payload: { ...transfer } }, answer);
  }

  /** Crypto arriving at a wallet's address, with a transaction id in the network's format, as the chain would give it. */
  chainTransfer(transfer: IncomingChainTransfer, answer?: KeyedAnswer): Promise<unknown> {
    const reference = providerId('wtx');
    const payload = { ...transfer, txHash: sandboxTransactionHash(transfer.network, reference) };
    return this.inbox.reportForRequest({ provider: sandboxProviderName, type: 'wallet_deposit.received', reference, idempotencyKey: `simulation:${reference}`, payload }, answer);
  }
}
