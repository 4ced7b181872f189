import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CapturedLog } from '../helpers/captured-log.js';
import { createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * Large uploads over real connections (a listening server on 127.0.0.1): permits are taken only once the caller is
 * known, per customer and in total, and a body that stops arriving is cut within the rate window. The window is
 * short here (UPLOAD_RATE_WINDOW_MS) so that the cuts come within a few seconds of real time.
 */

const rateWindowMs = 1500;
/** What "promptly" means for an upload that waits for nobody: far below a rate window. */
const promptMs = 1000;
/** A body larger than the default body limit, so that it goes through the upload gate. */
const gatedBodyBytes = 100_000;

const pngBytes = (size: number) => {
  const bytes = Buffer.alloc(size, 0x41);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes);
  return bytes;
};

/** Rejects when the promise has not settled in time, so that a held upload fails the test instead of hanging it. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

interface StalledUpload {
  /** The first bytes of the server's answer (its status line), and when they came. */
  answered: Promise<{ status: number; afterMs: number }>;
  /** Everything the server sent, once it closed the connection. */
  closed: Promise<{ text: string; afterMs: number }>;
  destroy(): void;
}

/** A POST whose headers and first body byte are sent at once, and nothing more: the connection stalls. */
function stalledPost(port: number, path: string, headers: Record<string, string>): StalledUpload {
  const started = performance.now();
  const socket = net.connect(port, '127.0.0.1');
  const lines = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries({ ...headers, 'content-length': String(gatedBodyBytes) }).map(([name, value]) => `${name}: ${value}`)];
  socket.write(`${lines.join('\r\n')}\r\n\r\n-`);
  socket.on('error', () => undefined);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  return {
    answered: new Promise((resolve) => socket.once('data', (chunk: Buffer) => resolve({ status: Number(chunk.toString('latin1').split(' ')[1]), afterMs: performance.now() - started }))),
    closed: new Promise((resolve) => socket.once('close', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), afterMs: performance.now() - started }))),
    destroy: () => socket.destroy(),
  };
}

const bodyOf = (text: string) => text.slice(text.indexOf('\r\n\r\n') + 4);

describe('large uploads over real connections (UPLOAD_CONCURRENCY=2, one per customer)', () => {
  let t: TestApp;
  let base: string;
  let port: number;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let bobUserId: string;
  let aliceLinkPath: string;
  const open: StalledUpload[] = [];
  const log = new CapturedLog();
  /** Resolves once the uploads sent since line `from` of the log hold `holding` permits and `waiting` wait for one. */
  async function atTheGate(from: number, { holding, waiting }: { holding: number; waiting: number }): Promise<void> {
    await log.waitFor('upload permitted: its body is read', holding, { from });
    await log.waitFor('upload waits for a permit, its body unread', waiting, { from });
  }

  beforeAll(async () => {
    t = await createTestApp({
      env: { UPLOAD_CONCURRENCY: '2', UPLOAD_CONCURRENCY_PER_CUSTOMER: '1', UPLOAD_RATE_WINDOW_MS: String(rateWindowMs), LOG_LEVEL: 'debug' },
      logStream: log.stream,
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob Ltd');
    bobUserId = (await createIndividual(t, bob)).id;
    const hosted = await createIndividual(t, alice, { verificationMethod: 'hosted_kyc' });
    aliceLinkPath = new URL((await t.request({ url: `/end-users/${hosted.id}/onboarding-link`, key: alice.key })).json().data.url).pathname;
  });
  afterAll(async () => {
    for (const upload of open) upload.destroy();
    await t.close();
  });

  const stall = (path: string, headers: Record<string, string>) => {
    const upload = stalledPost(port, path, headers);
    open.push(upload);
    return upload;
  };
  const apiHeaders = async (customer: TestCustomer, key = customer.key) => ({ 'x-api-key': key, 'x-csrf-token': await t.csrfToken(key), 'content-type': 'application/json' });

  /** Bob's upload of a gated body through the real listener: it must be done promptly. */
  async function uploadsPromptly(customer: TestCustomer, endUserId: string): Promise<void> {
    const started = performance.now();
    const body = JSON.stringify({ endUserId, documentType: 'identity', fileName: 'passport.png', fileData: pngBytes(70_000).toString('base64'), mimeType: 'image/png' });
    expect(Buffer.byteLength(body)).toBeGreaterThan(64 * 1024);
    const response = await within(promptMs, fetch(`${base}/documents`, { method: 'POST', headers: await apiHeaders(customer), body }), 'an upload through the API');
    expect(response.status).toBe(201);
    expect(performance.now() - started).toBeLessThan(promptMs);
  }
  const bobUploadsPromptly = () => uploadsPromptly(bob, bobUserId);

  /** A stalled upload is answered 408 and its connection closed, within a few rate windows and not before one. */
  async function expectCut(upload: StalledUpload, windows: number): Promise<string> {
    const { text, afterMs } = await within(windows * rateWindowMs + 1500, upload.closed, 'a stalled upload');
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(afterMs).toBeGreaterThanOrEqual(rateWindowMs - 100);
    return text;
  }

  it('two stalled API uploads of one customer neither delay another customer’s upload nor outlive the rate window', async () => {
    const headers = await apiHeaders(alice);
    const from = log.lines.length;
    const stalled = [stall('/documents', headers), stall('/documents', headers)];
    // Both requests reach the gate: one holds Alice's permit, the other waits for it.
    await atTheGate(from, { holding: 1, waiting: 1 });
    await bobUploadsPromptly();
    // The first is cut a window after its permit, the second (which then gets Alice's permit) a window later.
    for (const [index, upload] of stalled.entries()) {
      const text = await expectCut(upload, index + 1);
      expect(text).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(bodyOf(text))).toEqual({
        error: { code: 'REQUEST_TIMEOUT', message: expect.stringMatching(/too slowly/), details: { min_bytes_per_second: t.config.uploadMinBytesPerSecond, window_seconds: rateWindowMs / 1000 } },
      });
    }
    // Alice can upload again once they are gone.
    const aliceUser = await createIndividual(t, alice);
    const again = await t.request({ method: 'POST', url: '/documents', key: alice.key, csrf: true, body: { endUserId: aliceUser.id, documentType: 'identity', fileName: 'p.png', fileData: pngBytes(70_000).toString('base64'), mimeType: 'image/png' } });
    expect(again.statusCode).toBe(201);
  });

  it('two stalled uploads on one hosted onboarding link hold the link’s permit, not its customer’s, and are cut with a page', async () => {
    const headers = { 'content-type': 'multipart/form-data; boundary=x' };
    const from = log.lines.length;
    const stalled = [stall(`${aliceLinkPath}/documents`, headers), stall(`${aliceLinkPath}/documents`, headers)];
    await atTheGate(from, { holding: 1, waiting: 1 });
    // Whoever holds the link cannot hold Alice's own uploads through her API keys.
    await uploadsPromptly(alice, (await createIndividual(t, alice)).id);
    for (const [index, upload] of stalled.entries()) {
      const text = await expectCut(upload, index + 1);
      expect(text).toMatch(/\r\ncontent-type: text\/html/i);
      expect(bodyOf(text)).toContain('arrived too slowly');
    }
  });

  it('lets a slow but steady upload finish, longer than a rate window, above the minimum rate', async () => {
    const aliceUser = await createIndividual(t, alice);
    const body = Buffer.from(JSON.stringify({ endUserId: aliceUser.id, documentType: 'identity', fileName: 'p.png', fileData: pngBytes(70_000).toString('base64'), mimeType: 'image/png' }));
    const chunkBytes = 4 * 1024;
    const socket = net.connect(port, '127.0.0.1');
    const headers = { ...(await apiHeaders(alice)), 'content-length': String(body.length) };
    socket.write(`POST /documents HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`);
    const answer = new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))));
    const started = performance.now();
    // 4 KiB every 100 ms: about 40 KiB/s, five times the minimum, for about 2.4 s.
    for (let offset = 0; offset < body.length; offset += chunkBytes) {
      socket.write(body.subarray(offset, offset + chunkBytes));
      await sleep(100);
    }
    const status = (await within(promptMs, answer, 'the steady upload')).split('\r\n')[0];
    socket.destroy();
    expect(performance.now() - started).toBeGreaterThan(rateWindowMs);
    expect(status).toBe('HTTP/1.1 201 Created');
  });

  it('answers an upload refused on its headers at once, even with every permit taken: a bad link, no key, a key without the scope', async () => {
    // Both permits held: one by Alice (through her link), one by Bob.
    const bobHeaders = await apiHeaders(bob);
    const from = log.lines.length;
    const holders = [stall(`${aliceLinkPath}/documents`, { 'content-type': 'multipart/form-data; boundary=x' }), stall('/documents', bobHeaders)];
    await atTheGate(from, { holding: 2, waiting: 0 });
    const narrow = await t.createKey(alice.id, { scopes: ['documents:read'] });
    const refused = [
      stall(`/onboarding/${'a'.repeat(43)}/documents`, { 'content-type': 'multipart/form-data; boundary=x' }),
      stall('/documents', { 'content-type': 'application/json' }),
      stall('/documents', await apiHeaders(alice, narrow.key)),
    ];
    // Were any of them to wait for a permit before its caller is checked, it would wait for a holder to be cut.
    const statuses = [];
    for (const upload of refused) statuses.push((await within(promptMs, upload.answered, 'a refused upload')).status);
    expect(statuses).toEqual([404, 401, 403]);
    for (const holder of holders) await expectCut(holder, 1);
  });
});
