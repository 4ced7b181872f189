import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from './database.js';

/**
 * "Contains these words" for the dashboard's search boxes, the same on both databases: case-insensitive for the
 * letters A-Z and exact for every other character. SQLite's lower() folds ASCII letters only, PostgreSQL's folds
 * all of Unicode; there translate() folds the same 26 letters, so `émile` and `Émile` differ on both, and `ADA`
 * finds `Ada` on both. The term's `%`, `_` and `\` match themselves.
 */
const upperLetters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const lowerLetters = upperLetters.toLowerCase();

const asciiLower = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());

export function containsText(dialect: Dialect, value: Expression<string | null>, term: string): RawBuilder<SqlBool> {
  const pattern = `%${asciiLower(term).replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
  const folded = dialect === 'sqlite' ? sql`lower(${value})` : sql`translate(${value}, ${upperLetters}, ${lowerLetters})`;
  return sql<SqlBool>`${folded} like ${pattern} escape '\\'`;
}
