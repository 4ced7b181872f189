// Funds an account, pays a SEPA payee, and reconciles the payment through the transaction history.
// Run: CUSTOMER_API_KEY=… node examples/pay-a-payee.ts
import { clientFromEnv, settled } from './client.ts';

const api = clientFromEnv();
const { data: account } = await api.createFiatAccount({ body: { accountName: 'Operating', currency: 'EUR' } });
await api.sandboxCreateFiatDeposit({ params: { path: { id: account.id } }, body: { amount: 1000 } });
console.log(`funded ${account.iban}`);

const { data: payee } = await api.createPayee({
  body: {
    name: 'Müller Logistik GmbH',
    address: { line1: 'Hauptstraße 12', city: 'Berlin', postalCode: '10115', country: 'DE' },
    bankDetails: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
  },
});

// A reference unique to this payment: POST /payments takes no Idempotency-Key, so it is how to find the payment
// again if its answer is lost (docs/sdk.md "Payments and ambiguous failures").
const reference = `Invoice ${new Date().toISOString().slice(0, 10)}-${Math.floor(Math.random() * 1e6)}`;
const { data: payment } = await api.createPayment({ body: { fromAccountId: account.id, payeeId: payee.id, amount: 250.5, currency: 'EUR', reference } });
console.log(`payment ${payment.id}: ${payment.status}`);

const done = await settled(
  () => api.sandboxSettlePayment({ params: { path: { id: payment.id } }, body: { outcome: 'completed' } }),
  () => api.getPayment({ params: { path: { id: payment.id } } }),
);
const { data: history } = await api.listTransactions({ params: { query: { reference } } });
console.log(`payment ${done.id} is ${done.status}; the history holds ${history.length} transaction(s) with reference "${reference}": ${history.map((t) => `${t.amount} ${t.currency}`).join(', ')}`);
