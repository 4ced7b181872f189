// Exchanges EUR into USDC: a quote, its confirmation into an order, and (sandbox) the order settled.
// Run: CUSTOMER_API_KEY=… node examples/exchange-eur-usdc.ts
import { clientFromEnv, settled } from './client.ts';

const api = clientFromEnv();
const { data: account } = await api.createFiatAccount({ body: { accountName: 'Treasury', currency: 'EUR' } });
await api.sandboxCreateFiatDeposit({ params: { path: { id: account.id } }, body: { amount: 5000 } });
const { data: wallet } = await api.createWallet({ body: {} });
// The order credits the wallet's USDC address on Ethereum.
await api.createWalletAddress({ params: { path: { walletId: wallet.local_id } }, body: { asset: 'USDC', network: 'ETH' } });

const { data: quote } = await api.createOtcQuote({ body: { sourceFrAccountId: account.id, destinationProviderWalletId: wallet.local_id, sourceAmountEur: '1000.00' } });
console.log(`quote ${quote.quoteId}: 1000.00 EUR → ${quote.destinationAmount} USDC, valid until ${quote.ttlExpiresAt}`);
const { data: order } = await api.createOtcOrder({ body: { quoteId: quote.quoteId } });
console.log(`order ${order.orderId}: ${order.status}`);

const done = await settled(
  () => api.sandboxSettleOtcOrder({ params: { path: { orderId: order.orderId } }, body: { outcome: 'completed' } }),
  () => api.getOtcOrder({ params: { path: { orderId: order.orderId } } }),
);
console.log(`order ${done.orderId} is ${done.status}`);
