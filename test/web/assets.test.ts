import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { signedInBrowser } from '../helpers/dashboard.js';

const source = (name: string) => readFileSync(new URL(`../../src/web/assets/${name}`, import.meta.url));

describe('the pages’ assets: content-hashed addresses, cached for good, compressed; an icon on every page', () => {
  let t: TestApp;
  let links: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp();
    const alice = await t.createCustomer('Alice Ltd');
    const browser = await signedInBrowser(t, alice.id);
    const page = (await browser.get('/dashboard')).body;
    links = {
      css: /<link rel="stylesheet" href="([^"]+)">/.exec(page)![1]!,
      js: /<script src="([^"]+)" defer>/.exec(page)![1]!,
      icon: /<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/.exec(page)![1]!,
    };
  });
  afterAll(async () => t.close());

  it('links every asset by an address that names its content, on the dashboard, sign-in, error and onboarding pages', async () => {
    expect(links.css).toMatch(/^\/assets\/pages\.[0-9a-f]{16}\.css$/);
    expect(links.js).toMatch(/^\/assets\/pages\.[0-9a-f]{16}\.js$/);
    expect(links.icon).toMatch(/^\/assets\/favicon\.[0-9a-f]{16}\.svg$/);
    for (const url of ['/dashboard/sign-in', '/dashboard/link/unknown', '/onboarding/unknown.link']) {
      const page = await t.app.inject({ url });
      expect(page.body, url).toContain(`<link rel="icon" href="${links.icon}" type="image/svg+xml">`);
      expect(page.body, url).toContain(`href="${links.css}"`);
    }
  });

  it('serves a hashed address for a year, immutable, compressed as the browser asks (brotli, else gzip, else none)', async () => {
    const plain = await t.app.inject({ url: links.css });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(plain.headers.vary).toBe('accept-encoding');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(source('pages.css'))).toBe(true);

    const brotli = await t.app.inject({ url: links.css, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.rawPayload).equals(source('pages.css'))).toBe(true);
    expect(brotli.rawPayload.length).toBeLessThan(source('pages.css').length);

    const gzip = await t.app.inject({ url: links.js, headers: { 'accept-encoding': 'gzip, br;q=0' } });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).equals(source('pages.js'))).toBe(true);

    const preferred = await t.app.inject({ url: links.js, headers: { 'accept-encoding': 'br;q=0.5, gzip;q=0.9' } });
    expect(preferred.headers['content-encoding']).toBe('gzip');
    const anything = await t.app.inject({ url: links.js, headers: { 'accept-encoding': '*' } });
    expect(anything.headers['content-encoding']).toBe('br');
    const refused = await t.app.inject({ url: links.js, headers: { 'accept-encoding': 'identity, *;q=0' } });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.rawPayload.equals(source('pages.js'))).toBe(true);
  });

  it('keeps the old unhashed addresses working, uncached; an unknown asset is a 404', async () => {
    const old = await t.app.inject({ url: '/assets/pages.css', headers: { 'accept-encoding': 'gzip' } });
    expect(old.statusCode).toBe(200);
    expect(old.headers['cache-control']).toBe('no-cache');
    expect(gunzipSync(old.rawPayload).equals(source('pages.css'))).toBe(true);
    expect((await t.app.inject({ url: '/assets/pages.0000000000000000.css' })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/assets/secrets.txt' })).statusCode).toBe(404);
  });

  it('answers the icon at /favicon.ico too, which browsers ask for on their own (no 404)', async () => {
    const icon = await t.app.inject({ url: '/favicon.ico' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.rawPayload.equals(source('favicon.svg'))).toBe(true);
    const hashed = await t.app.inject({ url: links.icon });
    expect(hashed.statusCode).toBe(200);
    expect(hashed.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('still answers every other page no-store', async () => {
    expect((await t.app.inject({ url: '/dashboard/sign-in' })).headers['cache-control']).toBe('no-store');
    expect((await t.app.inject({ url: '/health' })).headers['cache-control']).toBe('no-store');
  });
});
