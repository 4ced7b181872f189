import { expect } from 'vitest';

/** What an error body must never show a client, whatever went wrong (stack traces, SQL, paths, internals). */
const leakPatterns: RegExp[] = [
  /node_modules/,
  /FST_/,
  /"stack"/,
  /\bat \S+ \(?[^)\s]*:\d+:\d+/,
  /\.(?:ts|js|mjs|cjs):\d+/,
  /\/(?:work|home|tmp|usr|var|src)\//,
  /\bselect\b[^"]*\bfrom\b/i,
  /\binsert\s+into\b/i,
  /SQLITE_|better-sqlite3|kysely|postgres|relation "|ECONNREFUSED|destroyed/i,
  /fastify|ajv|secure-json-parse/i,
  /Unexpected token|JSON\.parse|SyntaxError/,
];

export function expectNoLeaks(body: string): void {
  for (const pattern of leakPatterns) expect(body, `error body matches ${pattern}`).not.toMatch(pattern);
}
