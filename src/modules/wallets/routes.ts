import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { answered, createdAnswer, idempotencyHeaders, onCreatedOf, reservationOf } from '../../http/idempotency.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import { Pagination } from '../transactions/index.js';
import type { WalletSandbox } from './sandbox.js';
import type { WalletService } from './service.js';
import type { WalletTransferService } from './transfers.js';
import {
  CreateWalletAddressBody,
  CreateWalletBody,
  CreateWalletTransferBody,
  LiveBalance,
  LiveBalanceQuery,
  SettleWalletTransferBody,
  Wallet,
  WalletAddress,
  WalletDepositBody,
  WalletDetail,
  WalletParams,
  WalletTransfer,
  WalletTransferParams,
  WalletTransfersQuery,
} from './schemas.js';

export function walletRoutes(app: FastifyInstance, wallets: WalletService, transfers: WalletTransferService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Wallets'];

  routes.post(
    '/wallets',
    {
      config: { scope: 'wallets:write', idempotency: { kind: 'create', readScope: 'wallets:read' } },
      schema: {
        tags,
        operationId: 'createWallet',
        summary: 'Create a wallet',
        description:
          'A custodial wallet with a default USDC deposit address on ETH. Every field is optional. ' +
          'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer and creates nothing.',
        headers: idempotencyHeaders(false),
        body: CreateWalletBody,
        // 404: an endUserId that is not one of yours; 422 LIMIT_EXCEEDED or PROVIDER_REFUSED; 502 PROVIDER_UNAVAILABLE.
        response: { 201: DataOf(Wallet), ...errorResponses(...authenticatedWriteErrors, 404, 409, 422, 502) },
      },
    },
    async (request) => {
      await wallets.create(callerOf(request), request.body, onCreatedOf(request));
    },
  );

  routes.get(
    '/wallets',
    {
      config: { scope: 'wallets:read' },
      schema: { tags, operationId: 'listWallets', summary: 'List wallets', response: { 200: DataOf(Type.Array(Wallet)), ...errorResponses(...authenticatedReadErrors) } },
    },
    async (request) => ({ data: await wallets.list(callerOf(request)) }),
  );

  routes.get(
    '/wallets/:walletId',
    {
      config: { scope: 'wallets:read' },
      schema: {
        tags,
        operationId: 'getWallet',
        summary: 'Get a wallet with its receive addresses and balances',
        params: WalletParams,
        response: { 200: DataOf(WalletDetail), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await wallets.get(callerOf(request), request.params.walletId) }),
  );

  routes.post(
    '/wallets/:walletId/addresses',
    {
      config: { scope: 'wallets:write', idempotency: { kind: 'create', readScope: 'wallets:read' } },
      schema: {
        tags,
        operationId: 'createWalletAddress',
        summary: 'Generate a receive address',
        description:
          'The asset and network must be a supported pair (see the asset field); the first address of an asset is its default. ' +
          'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer and creates nothing.',
        params: WalletParams,
        headers: idempotencyHeaders(false),
        body: CreateWalletAddressBody,
        // 400 for a pair outside the catalogue; 422 LIMIT_EXCEEDED or PROVIDER_REFUSED; 502 PROVIDER_UNAVAILABLE.
        response: { 201: DataOf(WalletAddress), ...errorResponses(...authenticatedWriteErrors, 404, 409, 422, 502) },
      },
    },
    async (request) => {
      await wallets.addAddress(callerOf(request), request.params.walletId, request.body, onCreatedOf(request));
    },
  );

  routes.post(
    '/wallets/:walletId/transfers',
    {
      config: { scope: 'wallets:write', idempotency: { kind: 'operation', readScope: 'wallets:read' } },
      schema: {
        tags,
        operationId: 'createWalletTransfer',
        summary: 'Send an on-chain transfer',
        description:
          'Reserves the amount from the available balance of the asset; the transfer is pending until the network settles it. ' +
          'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer and never sends twice.',
        params: WalletParams,
        headers: idempotencyHeaders(false),
        body: CreateWalletTransferBody,
        // 400: a pair outside the catalogue, an amount of 0 or with too many decimals, a destination not of the network.
        // 422 INSUFFICIENT_FUNDS: more than the available balance.
        response: { 201: DataOf(WalletTransfer), ...errorResponses(...authenticatedWriteErrors, 404, 409, 422) },
      },
    },
    async (request) => answered(request, createdAnswer(await transfers.create(callerOf(request), request.params.walletId, request.body, reservationOf(request)))),
  );

  routes.get(
    '/wallets/:walletId/transfers',
    {
      config: { scope: 'wallets:read' },
      schema: {
        tags,
        operationId: 'listWalletTransfers',
        summary: "List a wallet's transfers and deposits, newest first (paginated like GET /transactions)",
        params: WalletParams,
        querystring: WalletTransfersQuery,
        response: {
          200: Type.Object({ data: Type.Array(WalletTransfer), meta: Type.Object({ pagination: Pagination }) }, { additionalProperties: false }),
          ...errorResponses(...authenticatedReadErrors, 404),
        },
      },
    },
    async (request) => transfers.list(callerOf(request), request.params.walletId, request.query.page ?? 1, request.query.limit ?? 50),
  );

  routes.get(
    '/wallet-transfers/:transferId',
    {
      config: { scope: 'wallets:read' },
      schema: {
        tags,
        operationId: 'getWalletTransfer',
        summary: 'Get a wallet transfer or deposit',
        params: WalletTransferParams,
        response: { 200: DataOf(WalletTransfer), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await transfers.get(callerOf(request), request.params.transferId) }),
  );

  routes.get(
    '/otc-exchanges/wallets/:walletId/balance',
    {
      config: { scope: 'otc-exchanges:read' },
      schema: {
        tags: ['OTC exchange'],
        operationId: 'getWalletBalance',
        summary: "A wallet's live balance of an asset",
        description: 'The live-balance operation of spec §4. `balance` is what the wallet holds; `available` leaves out what pending transfers reserve.',
        params: WalletParams,
        querystring: LiveBalanceQuery,
        response: { 200: DataOf(LiveBalance), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await wallets.liveBalance(callerOf(request), request.params.walletId, request.query.asset ?? 'USDC') }),
  );
}

/** Sandbox simulation endpoints for wallets (docs/architecture.md, Sandbox simulation): deposits and the settlement of transfers. */
export function sandboxWalletRoutes(app: FastifyInstance, sandbox: WalletSandbox): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Sandbox'];

  routes.post(
    '/sandbox/wallets/:walletId/deposits',
    {
      config: { scope: 'wallets:write', idempotency: { kind: 'operation', readScope: 'wallets:read' } },
      schema: {
        tags,
        operationId: 'sandboxCreateWalletDeposit',
        summary: 'Deposit crypto into a wallet from outside (sandbox only)',
        description:
          'As if the asset arrived on-chain at the wallet\'s address of that network (the wallet must have one). ' +
          'Accepts an Idempotency-Key (docs/idempotency.md).',
        params: WalletParams,
        headers: idempotencyHeaders(false),
        body: WalletDepositBody,
        // 422 ADDRESS_REQUIRED: no address of the pair; LIMIT_EXCEEDED: beyond the largest balance a wallet holds.
        response: { 201: DataOf(WalletTransfer), ...errorResponses(...authenticatedWriteErrors, 404, 409, 422) },
      },
    },
    async (request) => answered(request, createdAnswer(await sandbox.deposit(callerOf(request), request.params.walletId, request.body, reservationOf(request)))),
  );

  routes.post(
    '/sandbox/wallet-transfers/:transferId/settle',
    {
      config: { scope: 'wallets:write' },
      schema: {
        tags,
        operationId: 'sandboxSettleWalletTransfer',
        summary: 'Settle a pending wallet transfer (sandbox only)',
        params: WalletTransferParams,
        body: SettleWalletTransferBody,
        response: { 200: DataOf(WalletTransfer), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await sandbox.settle(callerOf(request).customerId, request.params.transferId, request.body.outcome) }),
  );
}
