import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { tableOwners, type TableOwner } from '../../src/modules/table-owners.js';

/**
 * One module owns each table (docs/modules.md "Who owns which table"): no module's source names another module's
 * table in a query — Kysely's `selectFrom`, `insertInto`, `updateTable`, `deleteFrom`, `replaceInto`, `mergeInto`,
 * its joins, raw SQL in a `sql` template or `sql.table`, or the workers' claim (`claimDue…`, workers/claim.ts) and the
 * reaper's deletion (`deleteDue`) —
 * except a JOIN the owner map (src/modules/table-owners.ts) lists.
 */

const root = path.resolve(import.meta.dirname, '../..');
const modulesDir = 'src/modules/';

const statements = new Set(['selectFrom', 'insertInto', 'replaceInto', 'updateTable', 'deleteFrom', 'mergeInto']);
const joins = new Set(['innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'crossJoin', 'innerJoinLateral', 'leftJoinLateral', 'crossJoinLateral', 'using']);
/** A table named in raw SQL: after from, join, into, update, or a comma-separated from list. */
const rawSqlTable = /\b(from|join|into|update)\s+([a-z_][a-z0-9_]*)/gi;

interface Use {
  file: string;
  line: number;
  table: string;
  how: 'statement' | 'join';
}

interface Violation {
  file: string;
  line: number;
  table: string;
  owner: string;
}

/** `'customers as c'` → customers; a table not in the map (a CTE, an alias) is not a table. */
function tableIn(text: string, owners: Readonly<Record<string, TableOwner>>): string | undefined {
  const name = text.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  return Object.hasOwn(owners, name) ? name : undefined;
}

/** The tables a source file names in its queries. */
function tableUses(file: string, source: string, owners: Readonly<Record<string, TableOwner>>): Use[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const uses: Use[] = [];
  const add = (node: ts.Node, text: string, how: Use['how']) => {
    const table = tableIn(text, owners);
    if (table) uses.push({ file, line: sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1, table, how });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const rawTable = method === 'table' && node.expression.expression.getText(sourceFile) === 'sql';
      const how = statements.has(method) || rawTable ? 'statement' : joins.has(method) ? 'join' : undefined;
      const first = node.arguments[0];
      if (how && first) {
        const named = ts.isArrayLiteralExpression(first) ? first.elements : [first];
        for (const element of named) if (ts.isStringLiteralLike(element)) add(element, element.text, how);
      }
    }
    // The claim every worker shares, and the reaper's deletion, take their table as an argument or as the `table` option.
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && (node.expression.text.startsWith('claimDue') || node.expression.text === 'deleteDue')) {
      for (const argument of node.arguments) {
        if (ts.isStringLiteralLike(argument)) add(argument, argument.text, 'statement');
        if (!ts.isObjectLiteralExpression(argument)) continue;
        for (const property of argument.properties) {
          if (ts.isPropertyAssignment(property) && property.name.getText(sourceFile) === 'table' && ts.isStringLiteralLike(property.initializer)) {
            add(property.initializer, property.initializer.text, 'statement');
          }
        }
      }
    }
    if (ts.isTaggedTemplateExpression(node) && node.tag.getText(sourceFile).startsWith('sql')) {
      const template = node.template;
      const parts = ts.isNoSubstitutionTemplateLiteral(template) ? [template.text] : [template.head.text, ...template.templateSpans.map((span) => span.literal.text)];
      for (const part of parts) {
        for (const match of part.matchAll(rawSqlTable)) add(node, match[2] ?? '', match[1]?.toLowerCase() === 'join' ? 'join' : 'statement');
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return uses;
}

/** The uses of a table by a module that neither owns it nor is listed as joining it. */
function ownershipViolations(files: ReadonlyMap<string, string>, owners: Readonly<Record<string, TableOwner>> = tableOwners): Violation[] {
  const violations: Violation[] = [];
  for (const [file, source] of files) {
    for (const use of tableUses(file, source, owners)) {
      const { owner, joinedBy = [] } = owners[use.table] as TableOwner;
      const allowed = file.startsWith(owner) || (use.how === 'join' && joinedBy.some((joiner) => file.startsWith(joiner)));
      if (!allowed) violations.push({ file, line: use.line, table: use.table, owner });
    }
  }
  return violations;
}

/** Every module file under src/modules (the files sitting directly in it belong to no module and query nothing). */
function moduleSources(): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of fs.readdirSync(path.join(root, modulesDir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    files.set(file, fs.readFileSync(path.join(root, file), 'utf8'));
  }
  return files;
}

describe('table ownership', () => {
  it('no module queries a table it does not own, beyond the JOINs the owner map lists', () => {
    const files = moduleSources();
    expect(files.size).toBeGreaterThan(50);
    expect(ownershipViolations(files)).toEqual([]);
  });

  it('every owner in the map is a place in the source tree', () => {
    for (const { owner, joinedBy = [] } of Object.values(tableOwners)) {
      for (const place of [owner, ...joinedBy]) expect(fs.existsSync(path.join(root, place)), place).toBe(true);
    }
  });

  const owners: Record<string, TableOwner> = {
    customers: { owner: 'src/modules/customers/', joinedBy: ['src/modules/api-keys/'] },
    payments: { owner: 'src/modules/payments/' },
  };
  const payments = (body: string) => new Map([['src/modules/payments/service.ts', `import { sql } from 'kysely'; declare const claimDue: any, claimDueSettlements: any, deleteDue: any;\n${body}\n`]]);

  it("passes a module's queries of its own tables", () => {
    const files = payments("export const q = (db: any) => db.selectFrom('payments').innerJoin('payments as p', 'p.id', 'payments.id').selectAll();");
    expect(ownershipViolations(files, owners)).toEqual([]);
  });

  it.each([
    ['selectFrom', "db.selectFrom('customers').selectAll()"],
    ['selectFrom with an alias', "db.selectFrom('customers as c').selectAll()"],
    ['selectFrom of several tables', "db.selectFrom(['payments', 'customers']).selectAll()"],
    ['insertInto', "db.insertInto('customers').values({})"],
    ['updateTable', 'db.updateTable("customers"\n  ).set({})'],
    ['deleteFrom', "db.deleteFrom('customers')"],
    ['innerJoin', "db.selectFrom('payments').innerJoin('customers', 'customers.id', 'payments.customer_id')"],
    ['leftJoin', "db.selectFrom('payments').leftJoin('customers as c', 'c.id', 'payments.customer_id')"],
    ['raw SQL', 'sql`select id from customers where id = ${1} for update`'],
    ['a join in raw SQL', 'sql`select 1 from payments p join customers c on c.id = p.customer_id`'],
    ['raw SQL update', 'sql`update customers set name = ${"x"}`'],
    ['sql.table', "sql`select * from ${sql.table('customers')}`"],
    ["the workers' claim", "claimDue(db, { table: 'customers', due: sql`true` })"],
    ["the workers' claim of settlements", "claimDueSettlements(db, 'customers', new Date(), 1)"],
    ["the reaper's deletion", "deleteDue(db, { table: 'customers', key: ['id'], due: sql`true`, orderBy: 'id', limit: 1 })"],
  ])("fails on another module's table named by %s", (_, query) => {
    const files = payments(`export const q = (db: any) => ${query};`);
    expect(ownershipViolations(files, owners)).toEqual([{ file: 'src/modules/payments/service.ts', line: 2, table: 'customers', owner: 'src/modules/customers/' }]);
  });

  it('lets a module listed as joining a table join it, and nothing more', () => {
    const apiKeys = (query: string) => new Map([['src/modules/api-keys/repository.ts', `export const q = (db: any) => ${query};\n`]]);
    expect(ownershipViolations(apiKeys("db.selectFrom('payments as k').innerJoin('customers', 'customers.id', 'k.customer_id')"), owners)).toEqual([
      { file: 'src/modules/api-keys/repository.ts', line: 1, table: 'payments', owner: 'src/modules/payments/' },
    ]);
    expect(ownershipViolations(apiKeys("db.selectFrom('customers').selectAll()"), owners)).toEqual([
      { file: 'src/modules/api-keys/repository.ts', line: 1, table: 'customers', owner: 'src/modules/customers/' },
    ]);
  });

  it('ignores a word that is no table, and table names outside queries', () => {
    const files = payments("export const q = (db: any) => db.selectFrom('payments').select(sql`count(*)`.as('customers')).where('status', '=', 'customers');\n// select * from customers");
    expect(ownershipViolations(files, owners)).toEqual([]);
  });
});
