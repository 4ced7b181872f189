// The build's second step: tsc compiles src/ into dist/ but copies nothing else, so the SQL files the server runs
// (src/storage/sql, read by src/storage/migrate.ts from next to itself) are copied into dist/storage/sql here, for
// `npm start`, the CLI and the tests that run dist/. The copy replaces the old one: a file removed from src/ goes.
import fs from 'node:fs';

const source = new URL('../src/storage/sql/', import.meta.url);
const target = new URL('../dist/storage/sql/', import.meta.url);
fs.rmSync(target, { recursive: true, force: true });
fs.cpSync(source, target, { recursive: true });
