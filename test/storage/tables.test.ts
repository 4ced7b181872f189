import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { testDialect } from '../helpers/test-app.js';
import { useFreshStorage } from '../helpers/fresh-storage-hooks.js';

/**
 * src/storage/tables.ts, the types every query is checked against, is written by hand; this compares it with the
 * schema the migrations make, on the dialect of this vitest project (SQLite, and PostgreSQL in the postgres project):
 * the same tables, the same columns, the same nullability and the same coarse type class. A mismatch is named by
 * table and column.
 */

const tablesFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/storage/tables.ts');

/** Coarse enough to hold on both dialects: SQLite's declared types and PostgreSQL's differ in spelling only. */
type TypeClass = 'text' | 'integer' | 'real' | 'boolean' | 'blob';

interface ColumnShape {
  nullable: boolean;
  typeClass: TypeClass;
}

type SchemaShape = Map<string, Map<string, ColumnShape>>;

/** Tables of one dialect only (migration 0008): SQLite keeps document files on disk, PostgreSQL in the database. */
const postgresOnlyTables = new Set(['document_files']);
/** The migrator's own bookkeeping (Kysely's, and the functions' checksums, src/storage/migrate.ts): no query of the application reads them. */
const bookkeepingTables = new Set(['kysely_migration', 'kysely_migration_lock', 'function_checksums']);

// ---------------------------------------------------------------------------------------------------------------
// tables.ts, read with the TypeScript parser: the interface `Database` names each table's interface.

interface Classified {
  classes: Set<TypeClass>;
  nullable: boolean;
}

function classifyTypeNode(node: ts.TypeNode, aliases: Map<string, ts.TypeNode>, where: string): Classified {
  const classified = (typeClass: TypeClass): Classified => ({ classes: new Set([typeClass]), nullable: false });
  switch (node.kind) {
    case ts.SyntaxKind.StringKeyword:
      return classified('text');
    case ts.SyntaxKind.NumberKeyword:
    case ts.SyntaxKind.BigIntKeyword:
      return classified('integer');
    case ts.SyntaxKind.BooleanKeyword:
      return classified('boolean');
  }
  if (ts.isParenthesizedTypeNode(node)) return classifyTypeNode(node.type, aliases, where);
  if (ts.isLiteralTypeNode(node)) {
    if (node.literal.kind === ts.SyntaxKind.NullKeyword) return { classes: new Set(), nullable: true };
    if (ts.isStringLiteral(node.literal)) return classified('text');
    if (ts.isNumericLiteral(node.literal) || ts.isBigIntLiteral(node.literal)) return classified('integer');
  }
  if (ts.isUnionTypeNode(node)) {
    const members = node.types.map((member) => classifyTypeNode(member, aliases, where));
    return { classes: new Set(members.flatMap((member) => [...member.classes])), nullable: members.some((member) => member.nullable) };
  }
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
    const name = node.typeName.text;
    // Kysely's wrappers say when a value may be left out or changed; the first argument is what a select returns.
    if ((name === 'Generated' || name === 'ColumnType') && node.typeArguments?.[0]) return classifyTypeNode(node.typeArguments[0], aliases, where);
    if (name === 'Buffer' || name === 'Uint8Array') return classified('blob');
    const alias = aliases.get(name);
    if (alias) return classifyTypeNode(alias, aliases, where);
  }
  throw new Error(`${where}: cannot classify the type ${node.getText()} of tables.ts (extend tables.test.ts)`);
}

function declaredSchema(source: string): SchemaShape {
  const file = ts.createSourceFile('tables.ts', source, ts.ScriptTarget.Latest, true);
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  const aliases = new Map<string, ts.TypeNode>();
  for (const statement of file.statements) {
    if (ts.isInterfaceDeclaration(statement)) interfaces.set(statement.name.text, statement);
    if (ts.isTypeAliasDeclaration(statement)) aliases.set(statement.name.text, statement.type);
  }
  const propertiesOf = (declaration: ts.InterfaceDeclaration) =>
    declaration.members.filter(ts.isPropertySignature).map((member) => ({ name: member.name.getText(file), type: member.type!, optional: member.questionToken !== undefined }));
  const database = interfaces.get('Database');
  if (!database) throw new Error('tables.ts declares no interface Database');
  const schema: SchemaShape = new Map();
  for (const table of propertiesOf(database)) {
    const tableInterface = ts.isTypeReferenceNode(table.type) && ts.isIdentifier(table.type.typeName) ? interfaces.get(table.type.typeName.text) : undefined;
    if (!tableInterface) throw new Error(`${table.name}: Database names no interface of tables.ts`);
    const columns = new Map<string, ColumnShape>();
    for (const column of propertiesOf(tableInterface)) {
      const where = `${table.name}.${column.name}`;
      const { classes, nullable } = classifyTypeNode(column.type, aliases, where);
      if (classes.size !== 1) throw new Error(`${where}: tables.ts gives it ${classes.size === 0 ? 'no' : 'more than one'} type class (${[...classes].join(', ')})`);
      columns.set(column.name, { nullable: nullable || column.optional, typeClass: [...classes][0]! });
    }
    schema.set(table.name, columns);
  }
  return schema;
}

// ---------------------------------------------------------------------------------------------------------------
// The migrated schema, read from the database's catalog.

function typeClassOf(databaseType: string, where: string): TypeClass {
  const type = databaseType.toLowerCase();
  if (/int/.test(type)) return 'integer';
  if (/char|text|clob/.test(type)) return 'text';
  if (/real|floa|doub|numeric|decimal/.test(type)) return 'real';
  if (/bool/.test(type)) return 'boolean';
  if (/blob|bytea/.test(type)) return 'blob';
  throw new Error(`${where}: no type class for the database type ${databaseType} (extend tables.test.ts)`);
}

interface CatalogColumn {
  table: string;
  column: string;
  type: string;
  nullable: boolean;
}

async function catalogColumns(storage: Storage): Promise<CatalogColumn[]> {
  if (storage.dialect === 'postgres') {
    const { rows } = await sql<{ table: string; column: string; type: string; nullable: string }>`
      select table_name as "table", column_name as "column", data_type as "type", is_nullable as "nullable"
      from information_schema.columns where table_schema = current_schema()`.execute(storage.db);
    return rows.map((row) => ({ ...row, nullable: row.nullable === 'YES' }));
  }
  const { rows } = await sql<{ table: string; column: string; type: string; notnull: bigint | number; pk: bigint | number }>`
    select m.name as "table", c.name as "column", c.type as "type", c."notnull" as "notnull", c.pk as "pk"
    from sqlite_master m join pragma_table_info(m.name) c
    where m.type = 'table' and m.name not like 'sqlite\\_%' escape '\\'`.execute(storage.db);
  // A primary key column is never null in practice (every insert gives it), though SQLite, for compatibility with
  // its early versions, lets a non-integer one hold NULL unless declared NOT NULL: tables.ts says what the app stores.
  return rows.map((row) => ({ table: row.table, column: row.column, type: row.type, nullable: Number(row.notnull) === 0 && Number(row.pk) === 0 }));
}

async function migratedSchema(storage: Storage): Promise<SchemaShape> {
  const schema: SchemaShape = new Map();
  for (const { table, column, type, nullable } of await catalogColumns(storage)) {
    if (bookkeepingTables.has(table)) continue;
    if (!schema.has(table)) schema.set(table, new Map());
    schema.get(table)!.set(column, { nullable, typeClass: typeClassOf(type, `${table}.${column}`) });
  }
  return schema;
}

// ---------------------------------------------------------------------------------------------------------------

/** Every difference between tables.ts and the migrated schema of `dialect`, one line each, naming table and column. */
function schemaMismatches(declared: SchemaShape, migrated: SchemaShape, dialect: Storage['dialect']): string[] {
  const problems: string[] = [];
  const nullability = (nullable: boolean) => (nullable ? 'nullable' : 'not null');
  for (const [table, columns] of migrated) {
    const declaredColumns = declared.get(table);
    if (!declaredColumns) {
      problems.push(`${table}: a table of the database that tables.ts does not declare`);
      continue;
    }
    for (const [column, actual] of columns) {
      const expected = declaredColumns.get(column);
      if (!expected) problems.push(`${table}.${column}: a column of the database that tables.ts does not declare`);
      else {
        if (expected.nullable !== actual.nullable) problems.push(`${table}.${column}: ${nullability(actual.nullable)} in the database, ${nullability(expected.nullable)} in tables.ts`);
        if (expected.typeClass !== actual.typeClass) problems.push(`${table}.${column}: ${actual.typeClass} in the database, ${expected.typeClass} in tables.ts`);
      }
    }
    for (const column of declaredColumns.keys()) {
      if (!columns.has(column)) problems.push(`${table}.${column}: declared in tables.ts, not a column of the database`);
    }
  }
  for (const table of declared.keys()) {
    if (!migrated.has(table) && !(dialect === 'sqlite' && postgresOnlyTables.has(table))) problems.push(`${table}: declared in tables.ts, not a table of the database`);
  }
  return problems;
}

describe(`tables.ts against the migrated schema on ${testDialect}`, () => {
  let storage: Storage;
  let migrated: SchemaShape;
  const source = fs.readFileSync(tablesFile, 'utf8');

  useFreshStorage((fresh) => (storage = fresh));
  beforeAll(async () => {
    await migrateToLatest(storage);
    migrated = await migratedSchema(storage);
  });

  it('declares every table and column of the schema, with its nullability and type class, and nothing else', () => {
    expect(migrated.size).toBeGreaterThan(20);
    expect(schemaMismatches(declaredSchema(source), migrated, storage.dialect)).toEqual([]);
  });

  /** tables.ts with `before` replaced once by `after`, inside the declaration of `table`'s interface. */
  function edited(tableInterface: string, before: string, after: string): SchemaShape {
    // Exported or not: tables.ts exports only the interfaces other files name.
    const start = source.search(new RegExp(`^(export )?interface ${tableInterface} \\{`, 'm'));
    expect(start).toBeGreaterThanOrEqual(0);
    const end = source.indexOf('\n}', start);
    const body = source.slice(start, end);
    expect(body).toContain(before);
    return declaredSchema(source.slice(0, start) + body.replace(before, after) + source.slice(end));
  }

  it('names the table and column of each mismatch', () => {
    const check = (declared: SchemaShape) => schemaMismatches(declared, migrated, storage.dialect);
    expect(check(edited('ApiKeysTable', 'expires_at: string | null;', 'expires_at: string;'))).toEqual(['api_keys.expires_at: nullable in the database, not null in tables.ts']);
    expect(check(edited('ApiKeysTable', 'prefix: string;', 'prefix: string | null;'))).toEqual(['api_keys.prefix: not null in the database, nullable in tables.ts']);
    expect(check(edited('FiatAccountsTable', 'balance_minor: bigint;', 'balance_minor: string;'))).toEqual(['fiat_accounts.balance_minor: integer in the database, text in tables.ts']);
    expect(check(edited('CustomersTable', '  name: string;\n', ''))).toEqual(['customers.name: a column of the database that tables.ts does not declare']);
    expect(check(edited('CustomersTable', '  name: string;\n', '  name: string;\n  nickname: string;\n'))).toEqual([
      'customers.nickname: declared in tables.ts, not a column of the database',
    ]);
    expect(check(edited('Database', '  payees: PayeesTable;\n', ''))).toEqual(['payees: a table of the database that tables.ts does not declare']);
    expect(check(edited('Database', '  payees: PayeesTable;\n', '  payees: PayeesTable;\n  refunds: PayeesTable;\n'))).toEqual([
      'refunds: declared in tables.ts, not a table of the database',
    ]);
  });

  it('refuses a type it cannot classify, naming the column', () => {
    expect(() => edited('CustomersTable', 'name: string;', 'name: Date;')).toThrow('customers.name: cannot classify the type Date');
    expect(() => edited('CustomersTable', 'name: string;', 'name: string | bigint;')).toThrow('customers.name: tables.ts gives it more than one type class');
  });
});
