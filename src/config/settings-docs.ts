import { settings, settingSections, type SettingDeclaration } from './settings.js';
import { envExampleLineLengthMax } from './limits.js';

/**
 * The docs generated from the settings' declarations (settings.ts): the README's settings tables, between marker
 * comments, and .env.example. `npm run docs:settings` writes them (scripts/settings-docs.mjs); a test regenerates
 * them in memory and fails when the committed files differ.
 */

export const settingsTableStart = '<!-- settings:start -->';
export const settingsTableEnd = '<!-- settings:end -->';
export const settingsDocsCommand = 'npm run docs:settings';

type AnyDeclaration = SettingDeclaration<unknown, unknown>;

const declarations = Object.entries(settings) as Array<[string, AnyDeclaration]>;

/** The default as the variable's text; '' when there is none (unset), or it is the empty value. */
function defaultValue(declaration: AnyDeclaration): string {
  if (declaration.default === undefined) return '';
  if (!declaration.type.show) throw new Error('a setting with a default needs a type that can show it');
  return declaration.type.show(declaration.default);
}

function defaultMarkdown(declaration: AnyDeclaration): string {
  if (declaration.defaultText) return declaration.defaultText;
  const value = defaultValue(declaration);
  return value === '' ? 'unset' : `\`${value}\``;
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

function seeMarkdown(declaration: AnyDeclaration): string {
  if (!declaration.see) return '';
  const heading = declaration.see.heading ? ` "${declaration.see.heading}"` : '';
  return ` See [\`${declaration.see.page}\`](${declaration.see.page})${heading}.`;
}

/** The README's settings: one table per section, each variable with its default, accepted values and meaning. */
export function renderSettingsTable(): string {
  const parts = [`<!-- Generated from src/config/settings.ts by \`${settingsDocsCommand}\`: edit there, not here. -->`];
  for (const section of settingSections) {
    parts.push('', `### ${section}`, '', '| Variable | Default | Values | Meaning |', '|---|---|---|---|');
    for (const [name, declaration] of declarations.filter(([, declaration]) => declaration.section === section)) {
      parts.push(`| \`${name}\` | ${cell(defaultMarkdown(declaration))} | ${cell(declaration.type.accepts)} | ${cell(declaration.doc + seeMarkdown(declaration))} |`);
    }
  }
  return parts.join('\n');
}

/** `document` with the text between the settings markers replaced by the generated table. */
export function withSettingsTable(document: string): string {
  const start = document.indexOf(settingsTableStart);
  const end = document.indexOf(settingsTableEnd);
  if (start === -1 || end < start) throw new Error(`the settings markers ${settingsTableStart} … ${settingsTableEnd} are missing`);
  return `${document.slice(0, start + settingsTableStart.length)}\n${renderSettingsTable()}\n\n${document.slice(end)}`;
}

function comment(text: string): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(' ')) {
    if (line.length > 1 && line.length + 1 + word.length > envExampleLineLengthMax) {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  return [...lines, line];
}

/**
 * .env.example: every variable commented out, under its doc line, the values it takes and its default; the line
 * holds the default's text, so uncommenting it changes nothing until it is edited. A secret never has a value.
 */
export function renderEnvExample(): string {
  const parts = [
    ...comment('Settings of the Customer API: copy this file to .env and uncomment the lines you change. `npm start` and the CLI (`npx customer-api`) read .env from the directory they run in; a variable set in the environment wins over the file.'),
    ...comment(`Generated from src/config/settings.ts by \`${settingsDocsCommand}\`: edit there, not here (README.md "Configuration" lists the same).`),
  ];
  for (const section of settingSections) {
    parts.push('', `# --- ${section} ---`);
    for (const [name, declaration] of declarations.filter(([, declaration]) => declaration.section === section)) {
      if (declaration.secret && declaration.default !== undefined) throw new Error(`${name} is secret: it cannot have a default to show`);
      const see = declaration.see ? ` See ${declaration.see.page}${declaration.see.heading ? ` "${declaration.see.heading}"` : ''}.` : '';
      const defaultText = declaration.defaultText ? ` Default: ${declaration.defaultText}.` : '';
      parts.push('', ...comment(`${declaration.doc}${see} Values: ${declaration.type.accepts}.${defaultText}`), `# ${name}=${declaration.secret ? '' : defaultValue(declaration)}`);
    }
  }
  return `${parts.join('\n')}\n`;
}
