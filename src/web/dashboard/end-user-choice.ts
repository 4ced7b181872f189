import { dashboardEndUserMatchesMax, dashboardSearchLengthMax } from '../../config/limits.js';
import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import { formText, type FormBody } from '../form.js';
import { isRecordId } from './ids.js';
import { endUserName } from './names.js';
import type { WebServices } from './services.js';

/** An end user as a form offers it to choose. */
export interface EndUserOption {
  id: string;
  name: string;
  email: string | null;
}

/**
 * Whom a form's "end user" field names (`end_user`: a name, an email address or an id, typed; `end_user_id`: the
 * match picked among those a refused form listed): nobody (the customer's own company), one end user, or a problem
 * for the field — none matches, or several do (`matches`, the newest dashboardEndUserMatchesMax, and how many more).
 */
export type EndUserChoice = { endUserId: string | undefined } | { problem: string; matches: EndUserOption[]; more: number };

const lower = (text: string | null) => text?.toLowerCase();

/**
 * Resolves the field on the server, so that any of thousands of end users can be chosen without a script: an id
 * names one; words are looked for as the end users page's search does. The one match whose whole name or email
 * address is what was typed is taken, or else the one picked from the list the refused form showed.
 */
export async function chooseEndUser(services: WebServices, caller: AuthenticatedKey, form: FormBody): Promise<EndUserChoice> {
  const typed = formText(form, 'end_user');
  if (typed === undefined) return { endUserId: undefined };
  if (typed.length > dashboardSearchLengthMax) return { problem: `must be at most ${dashboardSearchLengthMax} characters`, matches: [], more: 0 };
  const search = isRecordId(typed) ? { id: typed.toLowerCase() } : { text: typed };
  const found = await services.endUsers.pageOfRows(caller, search, 1, dashboardEndUserMatchesMax);
  const matches = found.rows.map((row) => ({ id: row.id, name: endUserName(row), email: row.email }));
  if (matches.length === 0) return { problem: `no end user of yours matches “${typed}”: type a name, an email address or an id, or leave it empty for your company`, matches, more: 0 };
  const more = found.pagination.total - matches.length;
  // Taken without asking only when what was typed names it whole: its id, or the whole name or email address of the
  // one end user among every match (none left unread). Part of a name never opens an account in someone's name.
  if (isRecordId(typed)) return { endUserId: matches[0]!.id };
  const whole = more > 0 ? [] : matches.filter((match) => lower(match.name) === lower(typed) || lower(match.email) === lower(typed));
  if (whole.length === 1) return { endUserId: whole[0]!.id };
  const picked = formText(form, 'end_user_id');
  if (picked !== undefined && matches.some((match) => match.id === picked)) return { endUserId: picked };
  if (matches.length === 1) return { problem: `one end user matches “${typed}”: choose it below to confirm, or type the whole name, email address or id`, matches, more };
  return { problem: `${found.pagination.total} end users match “${typed}”: choose one below${more > 0 ? ', or type more of the name, the email address or the id' : ''}`, matches, more };
}
