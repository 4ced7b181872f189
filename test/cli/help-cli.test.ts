import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkout, childEnv, ensureBuilt, processTestTimeoutMs, run } from '../e2e/support.js';

/** `customer-api --version` and the `--help` of the program and of every command, found by walking the help itself. */

const packageVersion = (JSON.parse(fs.readFileSync(path.join(checkout, 'package.json'), 'utf8')) as { version: string }).version;

const cli = (...args: string[]) => run(process.execPath, ['bin/customer-api.js', ...args], { env: childEnv({}) });

/** The command names of a help text's "Commands:" section (commander's own `help` left out). */
function subcommands(help: string): string[] {
  const section = help.split('\nCommands:\n')[1]?.split('\n\n')[0] ?? '';
  return section
    .split('\n')
    .map((line) => /^ {2}([a-z][a-z-]*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
}

/** Every command path: ['migrate'], ['keys'], ['keys', 'create'], … */
async function commandPaths(parent: string[] = []): Promise<string[][]> {
  const result = await cli(...parent, '--help');
  const paths: string[][] = [];
  for (const name of subcommands(result.stdout)) {
    paths.push([...parent, name], ...(await commandPaths([...parent, name])));
  }
  return paths;
}

beforeAll(async () => ensureBuilt(), processTestTimeoutMs);

describe('customer-api --version and --help', { timeout: processTestTimeoutMs }, () => {
  it.each(['--version', '-v'])('%s prints the version of package.json and exits 0', async (flag) => {
    const result = await cli(flag);
    expect(result).toMatchObject({ code: 0, stdout: `${packageVersion}\n`, stderr: '' });
  });

  it('lists the commands an operator expects, sandbox init and the lists among them', async () => {
    const paths = (await commandPaths()).map((segments) => segments.join(' '));
    expect(paths).toEqual(
      expect.arrayContaining(['sandbox init', 'customers create', 'customers list', 'keys create', 'keys list', 'keys revoke', 'users create', 'users link', 'users list', 'migrate', 'ledger verify']),
    );
  });

  it('the program and every command: a one-line description and at least one example of that command', async () => {
    const paths = [[], ...(await commandPaths())];
    expect(paths.length).toBeGreaterThan(20);
    await Promise.all(
      paths.map(async (segments) => {
        const result = await cli(...segments, '--help');
        const label = `customer-api ${segments.join(' ')} --help`;
        expect(result.code, label).toBe(0);
        expect(result.stderr, label).toBe('');
        const [usage, blank, description] = result.stdout.split('\n');
        expect(usage, label).toMatch(/^Usage: customer-api/);
        expect(blank, label).toBe('');
        expect(description, label).toMatch(/^\S.{8,}/);
        expect(result.stdout, label).toMatch(/\nExamples?:\n {2}\$ \S/);
        expect(result.stdout, label).toContain(`npx customer-api ${segments.join(' ')}`.trimEnd());
      }),
    );
  });
});
