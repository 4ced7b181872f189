import type { Clock } from '../../clock.js';
import type { KeyedAnswer, MovedRecord } from '../../ledger/unit-of-work.js';
import type { ProviderEventInbox } from '../../providers/inbox.js';
import type { SandboxTimers } from '../../providers/sandbox/timers.js';
import { SandboxWalletTransfers } from '../../providers/sandbox/wallet-transfers.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { WalletDeposits } from './deposits.js';
import type { WalletTransferLifecycle } from './lifecycle.js';
import type { WalletOwnership } from './ownership.js';
import type { WalletDepositInput, WalletTransferRecord } from './schemas.js';

/**
 * The wallet simulations of the sandbox (docs/architecture.md, Sandbox simulation), as the routes and the dashboard
 * use them: deposits arriving from outside, and the simulated custodian's outcomes for transfers out
 * (providers/sandbox/wallet-transfers.ts), which are provider events applied by the transfer lifecycle.
 */
export class WalletSandbox {
  private readonly deposits: WalletDeposits;
  private readonly custodian: SandboxWalletTransfers | undefined;

  constructor(
    storage: Storage,
    clock: Clock,
    ownership: WalletOwnership,
    /** The custodian's timers, where it reports outcomes, and the lifecycle that applies them; without them, deposits only. */
    reporting?: { timers: SandboxTimers; inbox: ProviderEventInbox; transfers: WalletTransferLifecycle },
  ) {
    this.deposits = new WalletDeposits(storage, clock, ownership);
    this.custodian = reporting && new SandboxWalletTransfers(reporting.timers, reporting.inbox, reporting.transfers);
  }

  deposit(caller: AuthenticatedKey, walletId: string, input: WalletDepositInput, key?: KeyedAnswer): Promise<MovedRecord<WalletTransferRecord>> {
    return this.deposits.deposit(caller, walletId, input, key);
  }

  async settle(customerId: string, transferId: string, outcome: 'completed' | 'failed'): Promise<WalletTransferRecord> {
    return (await this.reporting().settle(customerId, transferId, outcome)) as WalletTransferRecord;
  }

  settleDueTransfers(): Promise<number> {
    return this.reporting().settleDueTransfers();
  }

  private reporting(): SandboxWalletTransfers {
    if (!this.custodian) throw new Error('this wallet sandbox was made for deposits only');
    return this.custodian;
  }
}
