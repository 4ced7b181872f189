import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Finds numeric literals in limit positions outside the limits files (src/config/limits.ts and the modules'
 * limits.ts it re-exports): every limit is a named constant there (docs/conventions.md). A limit position is
 *
 * - a bound or default of a schema (`maxLength: 200`, `minimum: 1`, `default: 50`) or any property, variable,
 *   parameter or field whose name says it is a limit (`timeoutMs = 5000`, `const windowMs = 1000`, `max: 3`);
 * - a comparison (`items.length > 50`, `attempt >= 3`, `status === 2`);
 * - the delay of a timer, the size of random bytes, a query's `.limit()` / `.offset()`, a clamp (`Math.min(x, 100)`).
 *
 * The value there may be computed: `a ?? 50`, `cond ? 10 : 20` and `2 * 1024` are looked through. Allowed in a limit
 * position: 0, 1 and -1 (empty, one, none), 2 when it multiplies or divides a named value (twice, half), unit
 * conversions applied to a named value (`ms / 1000`, `kib * 1024`), a remainder's divisor and a power's base
 * (`year % 4`, `10n ** scale`), a number written in hex (a code: `byte === 0x20`), and an HTTP status compared
 * with a status.
 */
export interface StrayLimit {
  file: string;
  line: number;
  text: string;
  why: string;
}

/** Schema keywords (JSON Schema / TypeBox) that bound or default a value. */
const schemaLimitKeys = new Set([
  'minLength', 'maxLength', 'minItems', 'maxItems', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'minProperties', 'maxProperties', 'multipleOf', 'default', 'min', 'max', 'limit', 'offset', 'timeout', 'ttl',
]);
/** Names that say a value is a limit: by their unit or their role, last (`lockTimeoutMs`, `pageSizeMax`). */
const limitName = /(?:Ms|Seconds|Minutes|Hours|Days|Bytes|Max|Min|Limit|Length|Size|Ttl|Timeout|Delay|Interval|Window|Attempts|Retries|Concurrency|Default|PerSecond|PerMinute)$/;
/** Factors that convert units of a named value. */
const unitFactors = new Set([8, 24, 60, 1000, 1024, 3600, 60_000, 86_400, 3_600_000, 86_400_000]);
const trivial = new Set([0, 1, -1]);
const arithmetic = new Set([ts.SyntaxKind.PlusToken, ts.SyntaxKind.MinusToken, ts.SyntaxKind.AsteriskToken, ts.SyntaxKind.SlashToken, ts.SyntaxKind.PercentToken, ts.SyntaxKind.AsteriskAsteriskToken]);
const comparisons = new Set([
  ts.SyntaxKind.LessThanToken, ts.SyntaxKind.LessThanEqualsToken, ts.SyntaxKind.GreaterThanToken, ts.SyntaxKind.GreaterThanEqualsToken,
  ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken,
]);
const fallbacks = new Set([ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken]);
/** Calls whose argument (by index) is a delay, a size or a bound. */
const limitArguments: Array<{ callee: RegExp; index: number; why: string }> = [
  { callee: /^(?:globalThis\.)?set(?:Timeout|Interval)$|^sleep$/, index: 1, why: 'timer delay' },
  { callee: /\.setTimeout$|^AbortSignal\.timeout$/, index: 0, why: 'timeout' },
  { callee: /(?:^|\.)random(?:Bytes|UUID)$/, index: 0, why: 'random size' },
  { callee: /\.(?:limit|offset)$/, index: 0, why: 'query bound' },
  { callee: /^Math\.(?:min|max)$/, index: -1, why: 'clamp' },
];

function nameOf(node: ts.Node | undefined): string | undefined {
  if (node && (ts.isIdentifier(node) || ts.isStringLiteral(node) || ts.isPrivateIdentifier(node))) return node.text;
  return undefined;
}

function numericValue(node: ts.NumericLiteral | ts.BigIntLiteral): number {
  return ts.isNumericLiteral(node) ? Number(node.text) : Number(node.text.replace(/n$/, '').replaceAll('_', ''));
}

/** Whether the expression names something (then its literals are arithmetic on a named value, not the value itself). */
function mentionsName(node: ts.Node): boolean {
  if (ts.isIdentifier(node) && node.text !== 'Math' && node.text !== 'Number') return true;
  if (ts.isPropertyAccessExpression(node)) return !/^Math\.|^Number\./.test(node.getText()) || node.name.text === 'length';
  return ts.forEachChild(node, (child) => (mentionsName(child) ? true : undefined)) ?? false;
}

function isStatusCode(value: number, other: ts.Node): boolean {
  return Number.isInteger(value) && value >= 100 && value <= 599 && /(?:status(?:Code)?|\.code)\)?$/i.test(other.getText());
}

/**
 * The expression whose value the literal is (or is part of): up through parentheses, signs, assertions,
 * arithmetic, fallbacks (`??`, `||`) and the branches of a conditional.
 */
function valueExpression(literal: ts.Node): ts.Node {
  let node = literal;
  for (;;) {
    const parent = node.parent;
    if (
      ts.isParenthesizedExpression(parent) ||
      ts.isPrefixUnaryExpression(parent) ||
      ts.isAsExpression(parent) ||
      ts.isSatisfiesExpression(parent) ||
      ts.isNonNullExpression(parent) ||
      (ts.isBinaryExpression(parent) && (arithmetic.has(parent.operatorToken.kind) || fallbacks.has(parent.operatorToken.kind))) ||
      (ts.isConditionalExpression(parent) && parent.condition !== node)
    ) {
      node = parent;
      continue;
    }
    return node;
  }
}

/** Why the place of `value` is a limit position, or undefined. */
function limitPosition(value: ts.Node): string | undefined {
  const parent = value.parent;
  if (ts.isPropertyAssignment(parent) && parent.initializer === value) {
    const name = nameOf(parent.name);
    if (name !== undefined && (schemaLimitKeys.has(name) || limitName.test(name))) return `\`${name}\``;
  }
  if ((ts.isVariableDeclaration(parent) || ts.isParameter(parent) || ts.isPropertyDeclaration(parent) || ts.isBindingElement(parent)) && parent.initializer === value) {
    const name = nameOf(parent.name);
    if (name !== undefined && limitName.test(name)) return `\`${name}\``;
  }
  if (ts.isBinaryExpression(parent) && comparisons.has(parent.operatorToken.kind)) return 'comparison';
  if (ts.isCallExpression(parent) && parent.arguments.includes(value as ts.Expression)) {
    const callee = parent.expression.getText();
    const index = parent.arguments.indexOf(value as ts.Expression);
    const rule = limitArguments.find((candidate) => candidate.callee.test(callee) && (candidate.index === -1 || candidate.index === index));
    if (rule) return rule.why;
  }
  return undefined;
}

/** The stray limits of one source file. */
export function strayLimitsIn(file: string, text: string): StrayLimit[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: StrayLimit[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isNumericLiteral(node) || ts.isBigIntLiteral(node)) && !ts.isPropertyName(node.parent as never)) check(node);
    ts.forEachChild(node, visit);
  };
  const check = (literal: ts.NumericLiteral | ts.BigIntLiteral) => {
    // A number that names a property (`{ 201: schema }`) or an element (`row[2]`) is no value.
    if ((ts.isPropertyAssignment(literal.parent) && literal.parent.name === literal) || ts.isElementAccessExpression(literal.parent)) return;
    const value = valueExpression(literal);
    const why = limitPosition(value);
    if (why === undefined) return;
    const signed = ts.isPrefixUnaryExpression(literal.parent) && literal.parent.operator === ts.SyntaxKind.MinusToken ? -numericValue(literal) : numericValue(literal);
    if (trivial.has(signed)) return;
    // Written in hex, octal or binary: a code or a bit pattern (a byte of JSON whitespace), not a quantity.
    if (/^0[xob]/i.test(literal.getText())) return;
    const operation = ts.isBinaryExpression(literal.parent) ? literal.parent : undefined;
    // A remainder's divisor (`year % 4`) and a power's base (`10n ** scale`, `2 ** attempt`) are arithmetic, not bounds.
    if (operation?.operatorToken.kind === ts.SyntaxKind.PercentToken) return;
    if (operation?.operatorToken.kind === ts.SyntaxKind.AsteriskAsteriskToken && operation.left === literal) return;
    if (value !== literal && mentionsName(value)) {
      const scales = operation?.operatorToken.kind === ts.SyntaxKind.AsteriskToken || operation?.operatorToken.kind === ts.SyntaxKind.SlashToken;
      if (scales && (signed === 2 || unitFactors.has(signed))) return;
    }
    const position = value.parent;
    if (ts.isBinaryExpression(position) && comparisons.has(position.operatorToken.kind)) {
      const other = position.left === value ? position.right : position.left;
      if (isStatusCode(signed, other)) return;
    }
    const { line } = source.getLineAndCharacterOfPosition(literal.getStart());
    found.push({ file, line: line + 1, text: value.parent.getText().split('\n')[0]!.trim().slice(0, 120), why });
  };
  visit(source);
  return found;
}

/** The limits files: src/config/limits.ts and the modules' own limits.ts. */
export function isLimitsFile(relativePath: string): boolean {
  return relativePath === 'src/config/limits.ts' || /^src\/modules\/[^/]+\/limits\.ts$/.test(relativePath);
}

/**
 * Whether a file is scanned: all of src but the limits files and the migrations, which record what a schema change
 * did when it was made (values included) and import nothing from src.
 */
export function isScanned(relativePath: string): boolean {
  return !isLimitsFile(relativePath) && !relativePath.startsWith('src/storage/migrations/');
}

export function sourceFiles(root: string, directory = 'src'): string[] {
  return fs.readdirSync(path.join(root, directory), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(root, relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}
