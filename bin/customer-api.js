#!/usr/bin/env node
// The operator CLI; `npm install` compiles src/ into dist/ (the prepare script).
import { existsSync } from 'node:fs';

// The settings of .env in the directory it runs in, as `npm start` reads them (node --env-file-if-exists=.env), so the
// CLI opens the server's database; a variable set in the environment wins over the file, as it does for the server.
try {
  process.loadEnvFile('.env');
} catch (error) {
  if (error.code !== 'ENOENT') {
    process.stderr.write(`customer-api: .env cannot be read (${error.code ?? error.message})\n`);
    process.exit(1);
  }
}

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('customer-api: dist/ is missing; run `npm install` (or `npm run build`) in the checkout first\n');
  process.exit(1);
}
await import(entry.href);
