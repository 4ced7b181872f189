import { fileURLToPath } from 'node:url';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance } from 'fastify';
import { assetUrls } from './assets.js';

/**
 * Templates are Eta files under src/web/views, read from there whether the code runs from src/ (tests) or dist/
 * (npm start): both are one level below the project root. Eta escapes every `<%= %>` output; `<%~ %>` (raw) is
 * used only to insert one rendered template into the layout.
 */
export const viewsDirectory = fileURLToPath(new URL('../../src/web/views', import.meta.url));

export async function installViews(context: FastifyInstance): Promise<void> {
  await context.register(view, {
    engine: { eta: new Eta({ autoEscape: true, autoTrim: [false, 'nl'] }) },
    root: viewsDirectory,
    viewExt: 'eta',
    // Templates are compiled once and kept (they do not change while the server runs).
    production: true,
    // Every page links the assets by their content-hashed addresses (`it.assets['pages.css']`).
    defaultContext: { assets: assetUrls },
  });
}
