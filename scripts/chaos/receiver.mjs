// The webhook receiver of the fault harness: one HTTP server on 127.0.0.1 for every subscription the runs make
// (one path each). Every delivery's signature is checked with the standardwebhooks library and the subscription's
// secret; deliveries are counted per webhook-id and per event, so the checks can tell a lost event (never
// delivered) from a duplicate (delivered again, which at-least-once allows).
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const bodyLimitBytes = 1 << 20;

export class WebhookReceiver {
  constructor() {
    /** path → { verifier, deliveries: Map<webhook-id, count>, events: Map<event id, count>, invalid: [] } */
    this.subscriptions = new Map();
    this.server = http.createServer((request, response) => this.receive(request, response));
    this.server.keepAliveTimeout = 60_000;
  }

  async listen() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** A URL of its own for one subscription; `secret` is set once the subscription exists. */
  register(name) {
    const path = `/hooks/${name}`;
    const entry = { verifier: undefined, deliveries: new Map(), events: new Map(), invalid: [] };
    this.subscriptions.set(path, entry);
    return {
      url: `http://127.0.0.1:${this.server.address().port}${path}`,
      setSecret: (secret) => (entry.verifier = new Webhook(secret)),
      entry,
    };
  }

  receive(request, response) {
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size <= bodyLimitBytes) chunks.push(chunk);
    });
    request.on('end', () => {
      const entry = this.subscriptions.get(request.url);
      // Unknown, or its secret not known yet: a failed attempt, which the server retries.
      if (!entry?.verifier) {
        response.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      let event;
      try {
        event = entry.verifier.verify(body, request.headers);
      } catch (error) {
        entry.invalid.push({ webhookId: request.headers['webhook-id'], reason: error.message });
        response.writeHead(400).end();
        return;
      }
      const webhookId = request.headers['webhook-id'];
      entry.deliveries.set(webhookId, (entry.deliveries.get(webhookId) ?? 0) + 1);
      entry.events.set(event.id, (entry.events.get(event.id) ?? 0) + 1);
      response.writeHead(204).end();
    });
  }

  async close() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
