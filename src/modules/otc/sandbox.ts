import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import { executeMoneyMovement, moneyMovement, type MoneyMovement } from '../../ledger/money-movement.js';
import { external, statementLine } from '../../ledger/statement-lines.js';
import { plannedEvent } from '../../ledger/unit-of-work.js';
import type { Network } from '../../ledger/networks.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import type { OtcOrdersTable } from '../../storage/tables.js';
import { claimDueSettlements, forEachClaimed } from '../../workers/claim.js';
import { accountPostings, addBalanceEvents, currentCustomerAccount, explainedBy, findCustomerAccount, requireCanSend, unchangedStatusGuards } from '../accounts/index.js';
import { addArrival } from '../wallets/index.js';
import { presentOrder } from './presenter.js';
import { findOrder } from './repository.js';
import type { OrderRecord } from './schemas.js';

export type OrderOutcome = 'completed' | 'failed';

/**
 * The simulated liquidity provider (docs/architecture.md, Sandbox simulation): an order's EUR is debited (suspense → clearing), then the crypto is
 * credited to the wallet (clearing → wallet, the spread to fee income), or the order fails and its EUR is returned.
 * Each step is one money movement guarded by the order's status, so a step happens once.
 */
export class OtcSandbox {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly caches: ReadCaches,
    /** Each step happens this long after the previous one; undefined = only by hand. */
    private readonly autoSettleMs: number | undefined,
    /** How long a claimed step is this instance's (SETTLEMENT_LEASE_SECONDS). */
    private readonly settlementLeaseMs: number,
  ) {}

  /**
   * `completed` takes the order through whatever steps remain (a step the worker took meanwhile is not taken again);
   * `failed` returns the EUR, from suspense before the debit or from the liquidity provider after it.
   */
  async settle(customerId: string, orderId: string, outcome: OrderOutcome): Promise<OrderRecord> {
    let order = await findOrder(this.storage.db, customerId, orderId.toLowerCase());
    if (!order) throw notFound('order');
    if (outcome === 'failed') return presentOrder(await this.fail(order, 'Rejected by the liquidity provider (sandbox)'));
    if (order.status === 'debit_pending') {
      const read = order;
      order = await this.debit(read).catch(async (error: unknown) => {
        const current = await findOrder(this.storage.db, customerId, read.id);
        if (error instanceof DomainError && error.code === 'INVALID_STATUS_TRANSITION' && current) return current;
        throw error;
      });
      // The worker took both steps meanwhile.
      if (order.status === 'settled') return presentOrder(order);
    }
    return presentOrder(await this.credit(order));
  }

  /** Moves the orders whose time has come one step on, each claimed first (workers/claim.ts). */
  async settleDueOrders(): Promise<number> {
    const due = await claimDueSettlements<OtcOrdersTable>(this.storage, 'otc_orders', this.clock.now(), this.settlementLeaseMs, ['debit_pending', 'debited']);
    return forEachClaimed(due, (order) => (order.status === 'debit_pending' ? this.debitOrFail(order) : this.credit(order)));
  }

  /** The liquidity provider takes no EUR from an account frozen or closed since the confirmation: the order fails, saying why. */
  private async debitOrFail(order: OtcOrdersTable): Promise<OtcOrdersTable> {
    return this.debit(order).catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'ACCOUNT_NOT_ACTIVE') return this.fail(order, error.message);
      throw error;
    });
  }

  /**
   * debit_pending → debited: the reserved EUR leaves for the liquidity provider; its statement line completes. Only
   * while money may still leave the account it came from (ACCOUNT_NOT_ACTIVE otherwise): decided on its statuses as
   * stored now, and guarded to be the same when the step commits.
   */
  private async debit(order: OtcOrdersTable): Promise<OtcOrdersTable> {
    const account = await currentCustomerAccount(this.storage, order.customer_id, order.source_account_id);
    if (!account) throw new Error(`order ${order.id} names no account of its customer`);
    requireCanSend(account);
    const now = this.clock.now();
    const nowText = now.toISOString();
    const next: OtcOrdersTable = { ...order, status: 'debited', debited_at: nowText, updated_at: nowText, settle_at: this.nextStepAt(now) };
    const amount = BigInt(order.source_amount_minor);
    const movement = moneyMovement(order.customer_id, nowText, 'otc_debit', order.id, [
      { account: { kind: 'system', code: 'suspense' }, asset: 'EUR', amount: -amount },
      { account: { kind: 'system', code: 'clearing' }, asset: 'EUR', amount },
    ]);
    this.guard(movement, order, next, { debited_at: nowText });
    movement.work.guards.push(...unchangedStatusGuards(account));
    movement.work.statementLineUpdates.push({ id: order.transaction_id, status: 'completed', completed_at: nowText, updated_at: nowText });
    await executeMoneyMovement(this.storage, movement);
    return next;
  }

  /**
   * debited → settled: the crypto arrives in the wallet at the quoted amount, at the asset's default address, and is
   * listed with the wallet's deposits (docs/wallets.md "History"); the spread is the platform's.
   */
  private async credit(order: OtcOrdersTable): Promise<OtcOrdersTable> {
    if (order.status !== 'debited') throw this.refused(order, 'settled');
    const address = await this.storage.db
      .selectFrom('wallet_addresses')
      .select(['network', 'address'])
      .where('wallet_id', '=', order.wallet_id)
      .where('asset', '=', order.destination_currency)
      .where('is_default', '=', 1)
      .executeTakeFirstOrThrow();
    const nowText = this.clock.now().toISOString();
    const next: OtcOrdersTable = { ...order, status: 'settled', settled_at: nowText, updated_at: nowText, settle_at: null };
    const asset = order.destination_currency as CryptoAsset;
    const credited = BigInt(order.destination_amount_minor);
    const spread = BigInt(order.spread_minor);
    const movement = moneyMovement(order.customer_id, nowText, 'otc_settle', order.id, [
      { account: { kind: 'system', code: 'clearing' }, asset, amount: -(credited + spread) },
      { account: { kind: 'wallet', id: order.wallet_id, asset }, asset, amount: credited },
      { account: { kind: 'system', code: 'fee_income' }, asset, amount: spread },
    ]);
    this.guard(movement, order, next, { settled_at: nowText });
    addArrival(movement.work, nowText, {
      customerId: order.customer_id,
      walletId: order.wallet_id,
      asset,
      network: address.network as Network,
      amountMinor: credited,
      address: address.address,
      note: `OTC order ${order.id}`,
    });
    await executeMoneyMovement(this.storage, movement);
    return next;
  }

  /**
   * debit_pending or debited → failed: the EUR goes back to the account (from suspense, or from the liquidity provider
   * once debited), with a statement line of the return.
   */
  private async fail(order: OtcOrdersTable, reason: string): Promise<OtcOrdersTable> {
    if (order.status !== 'debit_pending' && order.status !== 'debited') throw this.refused(order, 'failed');
    const debited = order.status === 'debited';
    const nowText = this.clock.now().toISOString();
    const next: OtcOrdersTable = { ...order, status: 'failed', failure_reason: reason, updated_at: nowText, settle_at: null };
    const account = await this.sourceAccount(order);
    const amount = BigInt(order.source_amount_minor);
    const movement = moneyMovement(order.customer_id, nowText, 'otc_failed', order.id, [
      { account: { kind: 'system', code: debited ? 'clearing' : 'suspense' }, asset: 'EUR', amount: -amount },
      ...accountPostings(account, amount),
    ]);
    this.guard(movement, order, next, { failure_reason: reason });
    // Before the debit the EUR never left: its line fails. After it, the line stands and the return balances it.
    if (!debited) movement.work.statementLineUpdates.push({ id: order.transaction_id, status: 'failed', completed_at: null, updated_at: nowText });
    const returned = statementLine({
      customerId: order.customer_id,
      account,
      direction: 'incoming',
      type: 'otc_exchange_return',
      amountMinor: amount,
      status: 'completed',
      counterpart: external,
      description: `Return of exchange ${order.id}: ${reason}`,
      reference: order.id,
      at: nowText,
    });
    movement.work.statementLines.push(returned);
    await addBalanceEvents(this.storage, this.caches, movement, explainedBy(movement, returned.id));
    await executeMoneyMovement(this.storage, movement);
    return next;
  }

  /** The order's status change, once: the movement fails unless the order is still in the status it was read in. */
  private guard(movement: MoneyMovement, order: OtcOrdersTable, next: OtcOrdersTable, set: Record<string, string | null>): void {
    movement.work.guards.push({
      table: 'otc_orders',
      match: { id: order.id, status: order.status },
      set: { status: next.status, updated_at: next.updated_at, settle_at: next.settle_at, ...set },
      error: 'INVALID_STATUS_TRANSITION',
      message: 'The order moved on meanwhile.',
      details: { to: next.status },
    });
    movement.work.events.push(plannedEvent(order.customer_id, 'otc_order.status_updated', presentOrder(next), next.updated_at));
  }

  private async sourceAccount(order: OtcOrdersTable) {
    const account = await findCustomerAccount(this.storage, this.caches, order.customer_id, order.source_account_id);
    if (!account) throw new Error(`order ${order.id} names no account of its customer`);
    return account;
  }

  private refused(order: OtcOrdersTable, to: string): DomainError {
    return new DomainError('INVALID_STATUS_TRANSITION', `A ${order.status} order cannot become ${to}.`, { from: order.status, to });
  }

  private nextStepAt(now: Date): string | null {
    return this.autoSettleMs === undefined ? null : new Date(now.getTime() + this.autoSettleMs).toISOString();
  }
}
