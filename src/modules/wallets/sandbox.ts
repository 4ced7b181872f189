import type { TestClockTime } from '../../clock.js';
import type { KeyedAnswer, MovedRecord } from '../../ledger/unit-of-work.js';
import type { ProviderEventInbox } from '../../providers/inbox.js';
import { SandboxDeposits } from '../../providers/sandbox/deposits.js';
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
 * use them: the simulated custodian's reports of deposits arriving from outside and of the outcomes of transfers out
 * (providers/sandbox/deposits.ts, wallet-transfers.ts), provider events applied by the deposit and transfer lifecycles.
 */
export class WalletSandbox {
  private readonly deposits: WalletDeposits;
  private readonly custodian: SandboxWalletTransfers;

  constructor(
    storage: Storage,
    ownership: WalletOwnership,
    /** The custodian's timers, where it reports outcomes, and the lifecycle that applies those of transfers out. */
    reporting: { timers: SandboxTimers; inbox: ProviderEventInbox; transfers: WalletTransferLifecycle },
  ) {
    this.deposits = new WalletDeposits(storage, ownership, new SandboxDeposits(reporting.inbox));
    this.custodian = new SandboxWalletTransfers(reporting.timers, reporting.inbox, reporting.transfers);
  }

  deposit(caller: AuthenticatedKey, walletId: string, input: WalletDepositInput, key?: KeyedAnswer): Promise<MovedRecord<WalletTransferRecord>> {
    return this.deposits.deposit(caller, walletId, input, key);
  }

  async settle(customerId: string, transferId: string, outcome: 'completed' | 'failed'): Promise<WalletTransferRecord> {
    return (await this.custodian.settle(customerId, transferId, outcome)) as WalletTransferRecord;
  }

  settleDueTransfers(): Promise<number> {
    return this.custodian.settleDueTransfers();
  }

  settleDueTransfersOnClock(testClock: TestClockTime): Promise<void> {
    return this.custodian.settleDueTransfersOnClock(testClock);
  }
}
