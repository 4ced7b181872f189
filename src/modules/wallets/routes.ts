import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import type { WalletService } from './service.js';
import { CreateWalletAddressBody, CreateWalletBody, Wallet, WalletAddress, WalletDetail, WalletParams } from './schemas.js';

export function walletRoutes(app: FastifyInstance, wallets: WalletService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Wallets'];

  routes.post(
    '/wallets',
    {
      config: { scope: 'wallets:write' },
      // Every field is optional, so a request without a body asks for a wallet with the defaults.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
      schema: {
        tags,
        summary: 'Create a wallet',
        description: 'A custodial wallet with a default USDC deposit address on ETH. Every field is optional.',
        body: CreateWalletBody,
        // 404: an endUserId that is not one of yours; 422 LIMIT_EXCEEDED or PROVIDER_REFUSED; 502 PROVIDER_UNAVAILABLE.
        response: { 201: DataOf(Wallet), ...errorResponses(...authenticatedWriteErrors, 404, 422, 502) },
      },
    },
    async (request, reply) => reply.code(201).send({ data: await wallets.create(callerOf(request), request.body) }),
  );

  routes.get(
    '/wallets',
    {
      config: { scope: 'wallets:read' },
      schema: { tags, summary: 'List wallets', response: { 200: DataOf(Type.Array(Wallet)), ...errorResponses(...authenticatedReadErrors) } },
    },
    async (request) => ({ data: await wallets.list(callerOf(request)) }),
  );

  routes.get(
    '/wallets/:walletId',
    {
      config: { scope: 'wallets:read' },
      schema: {
        tags,
        summary: 'Get a wallet with its receive addresses',
        params: WalletParams,
        response: { 200: DataOf(WalletDetail), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await wallets.get(callerOf(request), request.params.walletId) }),
  );

  routes.post(
    '/wallets/:walletId/addresses',
    {
      config: { scope: 'wallets:write' },
      schema: {
        tags,
        summary: 'Generate a receive address',
        description: 'The asset and network must be a supported pair (see the asset field); the first address of an asset is its default.',
        params: WalletParams,
        body: CreateWalletAddressBody,
        // 400 for a pair outside the catalogue; 422 LIMIT_EXCEEDED or PROVIDER_REFUSED; 502 PROVIDER_UNAVAILABLE.
        response: { 201: DataOf(WalletAddress), ...errorResponses(...authenticatedWriteErrors, 404, 422, 502) },
      },
    },
    async (request, reply) => reply.code(201).send({ data: await wallets.addAddress(callerOf(request), request.params.walletId, request.body) }),
  );
}
