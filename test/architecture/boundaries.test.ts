import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The module boundaries of docs/architecture.md "Modules", as `npm run check:boundaries` checks them: the real tree
 * passes, and each rule fails on a tree that breaks it.
 */

const root = path.resolve(import.meta.dirname, '../..');
const config = path.join(root, '.dependency-cruiser.cjs');
const depcruise = path.join(root, 'node_modules', '.bin', 'depcruise');
const run = promisify(execFile);

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** Cruises `src` under `cwd` with the project's rules; the violations found. */
async function violationsIn(cwd: string): Promise<Violation[]> {
  const args = ['src', '--config', config, '--output-type', 'json'];
  // depcruise exits with the number of errors: a failing check is a rejected promise carrying the report.
  const output = await run(depcruise, args, { cwd, maxBuffer: 64 * 1024 * 1024 }).then(
    (result) => result.stdout,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
  return (JSON.parse(output) as { summary: { violations: Violation[] } }).summary.violations;
}

const trees: string[] = [];

/** A throwaway source tree: the files given (path → content) and a tsconfig like the project's. */
function treeOf(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'boundaries-'));
  trees.push(dir);
  const all = { ...files, 'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }) };
  for (const [file, content] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

afterEach(() => {
  for (const dir of trees.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Two modules: `accounts` with its index and repository, and what `payments` imports of it. */
const modulesWhere = (paymentsImport: string, extra: Record<string, string> = {}) => ({
  'src/modules/accounts/repository.ts': 'export const findAccount = (id: string) => id;\n',
  'src/modules/accounts/index.ts': "export { findAccount } from './repository.js';\n",
  'src/modules/payments/service.ts': `${paymentsImport}\nexport const pay = (id: string) => findAccount(id);\n`,
  ...extra,
});

describe('module boundaries (npm run check:boundaries)', () => {
  it('passes on the real source tree', async () => {
    expect(await violationsIn(root)).toEqual([]);
  });

  it('passes when a module uses another through its index', async () => {
    expect(await violationsIn(treeOf(modulesWhere("import { findAccount } from '../accounts/index.js';")))).toEqual([]);
  });

  it("fails on an import of another module's internal file", async () => {
    const violations = await violationsIn(treeOf(modulesWhere("import { findAccount } from '../accounts/repository.js';")));
    expect(violations.map((violation) => [violation.rule.name, violation.from, violation.to])).toEqual([
      ['no-deep-import-between-modules', 'src/modules/payments/service.ts', 'src/modules/accounts/repository.ts'],
    ]);
  });

  it("fails on an import of a module's internal file from outside the modules (app, workers, web)", async () => {
    const tree = treeOf(modulesWhere("import { findAccount } from '../accounts/index.js';", { 'src/app.ts': "export { pay } from './modules/payments/service.js';\n" }));
    expect((await violationsIn(tree)).map((violation) => violation.rule.name)).toEqual(['no-deep-import-into-modules']);
  });

  it('fails on a service that imports the HTTP edge', async () => {
    const tree = treeOf(
      modulesWhere("import { findAccount } from '../accounts/index.js';\nimport { header } from '../../http/headers.js';\nexport const h = header;", {
        'src/http/headers.ts': "export const header = 'x';\n",
      }),
    );
    expect((await violationsIn(tree)).map((violation) => [violation.rule.name, violation.from])).toEqual([['no-http-in-services', 'src/modules/payments/service.ts']]);
  });

  it("fails on a module file other than its plugin that registers the module's routes", async () => {
    const tree = treeOf(
      modulesWhere("import { findAccount } from '../accounts/index.js';\nimport { paymentRoutes } from './routes.js';\nexport const r = paymentRoutes;", {
        'src/modules/payments/routes.ts': 'export const paymentRoutes = () => undefined;\n',
      }),
    );
    expect((await violationsIn(tree)).map((violation) => [violation.rule.name, violation.from])).toEqual([['routes-only-in-plugin', 'src/modules/payments/service.ts']]);
  });

  it('fails on a page that imports a repository', async () => {
    const tree = treeOf(
      modulesWhere("import { findAccount } from '../accounts/index.js';", {
        'src/web/page.ts': "import { findAccount } from '../modules/accounts/repository.js';\nexport const page = findAccount;\n",
      }),
    );
    expect((await violationsIn(tree)).map((violation) => violation.rule.name).sort()).toEqual(['no-deep-import-into-modules', 'no-repositories-in-web']);
  });

  it('fails on two modules that import each other', async () => {
    const tree = treeOf(
      modulesWhere("import { findAccount } from '../accounts/index.js';", {
        'src/modules/payments/index.ts': "export { pay } from './service.js';\n",
        'src/modules/accounts/repository.ts': "import { pay } from '../payments/index.js';\nexport const findAccount = (id: string) => id;\nexport const again = pay;\n",
      }),
    );
    expect((await violationsIn(tree)).some((violation) => violation.rule.name === 'no-circular-modules')).toBe(true);
  });
});
