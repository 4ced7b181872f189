// A webhook receiver: verifies each delivery's signature with the subscription's signing secret and prints the event.
// Run: WEBHOOK_SECRET=whsec_… PORT=4242 node examples/webhook-receiver.ts  (then point a subscription, or
// `npx customer-api listen --forward-to http://localhost:4242/webhooks`, at it).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, WebhookVerificationError } from '@customer-api/sdk';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the subscription’s signing secret (whsec_…).');
  process.exit(2);
}
const port = Number(process.env.PORT ?? 4242);

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    try {
      // The raw body, exactly as received: the signature covers its bytes.
      const event = verifyWebhook(Buffer.concat(chunks), request.headers, secret);
      console.log(`verified ${event.type} ${event.id}`);
      response.writeHead(204).end();
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      console.error(`refused a delivery: ${error.message}`);
      response.writeHead(400).end();
    }
  });
});
server.listen(port, () => console.log(`listening on http://localhost:${(server.address() as AddressInfo).port}/webhooks`));
process.on('SIGTERM', () => server.close());
process.on('SIGINT', () => server.close());
