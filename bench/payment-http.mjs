// The HTTP shell the two payment references of `npm run bench` share: node:http, `POST /payments` with a JSON body,
// `GET /health`, a JSON answer, and a clean stop on SIGTERM/SIGINT. What a reference does per payment is its own.
import http from 'node:http';
import { parseJson } from './lib.mjs';

/**
 * The body of `POST /payments` both references read (they trust it: the real server's validation is not theirs).
 * @typedef {{ fromAccountId: string, toAccountId: string, amount: number, currency: string, reference: string }} PaymentBody
 */

/** A refusal with its HTTP status and error code, answered in the envelope. */
export class Refusal extends Error {
  /**
   * @param {number} status
   * @param {string} code
   */
  constructor(status, code) {
    super(code);
    this.status = status;
  }
}

/**
 * @param {http.ServerResponse} response
 * @param {number} status
 * @param {unknown} body
 */
function send(response, status, body) {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/**
 * Serves `pay(headers, body)` (its result becomes `data` of a 201) on `host:port` until a signal; then `close()`
 * releases the database and the process exits.
 *
 * @param {{
 *   port: number,
 *   host: string,
 *   pay: (headers: http.IncomingHttpHeaders, body: PaymentBody) => Promise<unknown>,
 *   close: () => Promise<unknown>,
 * }} reference
 */
export function servePayments({ port, host, pay, close }) {
  const server = http.createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/health') return send(response, 200, { status: 'ok' });
    if (request.method !== 'POST' || request.url !== '/payments') return send(response, 404, { error: { code: 'NOT_FOUND' } });
    /** @type {Buffer[]} */
    const chunks = [];
    request.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
    request.on('end', () => {
      Promise.resolve()
        .then(() => pay(request.headers, /** @type {PaymentBody} */ (parseJson(Buffer.concat(chunks).toString('utf8')))))
        .then(
          (data) => send(response, 201, { data }),
          (/** @type {unknown} */ error) =>
            send(response, error instanceof Refusal ? error.status : 500, {
              error: { code: error instanceof Refusal ? error.message : 'INTERNAL', message: String(error instanceof Error ? error.message : undefined) },
            }),
        );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, host);

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeAllConnections();
    void close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
