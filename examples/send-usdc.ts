// Sends USDC on-chain from a wallet (funded by a sandbox deposit), and (sandbox) the transfer settled.
// Run: CUSTOMER_API_KEY=… node examples/send-usdc.ts
import { clientFromEnv, settled } from './client.ts';

const api = clientFromEnv();
const { data: wallet } = await api.createWallet({ body: {} });
await api.createWalletAddress({ params: { path: { walletId: wallet.local_id } }, body: { asset: 'USDC', network: 'ETH' } });
await api.sandboxCreateWalletDeposit({ params: { path: { walletId: wallet.local_id } }, body: { asset: 'USDC', network: 'ETH', amount: '500' } });

const { data: transfer } = await api.createWalletTransfer({
  params: { path: { walletId: wallet.local_id } },
  body: { asset: 'USDC', network: 'ETH', amount: '125.50', destination: '0x52908400098527886e0f7030069857d2e4169ee7', note: 'Supplier payout' },
});
console.log(`transfer ${transfer.local_id}: ${transfer.status}`);

const done = await settled(
  () => api.sandboxSettleWalletTransfer({ params: { path: { transferId: transfer.local_id } }, body: { outcome: 'completed' } }),
  () => api.getWalletTransfer({ params: { path: { transferId: transfer.local_id } } }),
);
console.log(`transfer ${done.local_id} is ${done.status}`);
