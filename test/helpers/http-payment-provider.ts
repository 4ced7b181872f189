import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Submission {
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  /** Whether the Standard Webhooks signature verified with the shared secret. */
  signed: boolean;
}

/**
 * A payment provider that speaks the HTTP adapter's contract (docs/providers.md "The HTTP adapter") on loopback: it
 * takes `POST /payments` (answering what `answer` says), and reports outcomes by posting signed events to the API's
 * `POST /provider-events/http`. It knows nothing of the server's code: only the contract and the shared secret.
 */
export class HttpPaymentProviderDouble {
  readonly submissions: Submission[] = [];
  answer: (body: Record<string, unknown>) => { status: number; body: unknown } = () => ({ status: 202, body: { status: 'accepted' } });

  private constructor(
    private readonly server: Server,
    readonly secret: string,
  ) {}

  static async start(secret: string): Promise<HttpPaymentProviderDouble> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (request.method !== 'POST' || request.url !== '/payments') {
          response.writeHead(404).end();
          return;
        }
        let signed = true;
        try {
          new Webhook(secret).verify(text, request.headers as Record<string, string>);
        } catch {
          signed = false;
        }
        const body = JSON.parse(text) as Record<string, unknown>;
        double.submissions.push({ body, headers: request.headers, signed });
        const answer = double.answer(body);
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // No one knows the port before start returns, so every request the handler above takes finds `double` set.
    const double = new HttpPaymentProviderDouble(server, secret);
    return double;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Posts a signed outcome to the API at `apiUrl`, as the provider would; `at` and `secret` let a test sign it wrongly. */
  async report(apiUrl: string, event: Record<string, unknown>, options: { at?: Date; secret?: string; provider?: string } = {}): Promise<{ status: number; body: unknown }> {
    const body = JSON.stringify(event);
    const id = String(event.id);
    const at = options.at ?? new Date();
    const response = await fetch(`${apiUrl}/provider-events/${options.provider ?? 'http'}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(options.secret ?? this.secret).sign(id, at, body),
      },
      body,
    });
    return { status: response.status, body: await response.json() };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())));
  }
}
