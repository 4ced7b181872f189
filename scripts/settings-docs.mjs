// `npm run docs:settings`: rewrites the docs generated from src/config/settings.ts (the README's settings tables and
// .env.example) from the build in dist/, which the npm script makes first.
import fs from 'node:fs';
import { renderEnvExample, withSettingsTable } from '../dist/config/settings-docs.js';

const readme = new URL('../README.md', import.meta.url);
fs.writeFileSync(readme, withSettingsTable(fs.readFileSync(readme, 'utf8')));
fs.writeFileSync(new URL('../.env.example', import.meta.url), renderEnvExample());
