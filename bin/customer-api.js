#!/usr/bin/env node
// The operator CLI; `npm install` compiles src/ into dist/ (the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('customer-api: dist/ is missing; run `npm install` (or `npm run build`) in the checkout first\n');
  process.exit(1);
}
await import(entry.href);
