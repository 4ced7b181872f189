import { DomainError } from '../../errors.js';
import { dashboardSearchLengthMax } from '../../config/limits.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { formOf, formText } from '../form.js';
import { isRecordId } from './ids.js';

/**
 * What a dashboard search box was given (`?q=`), read the way a person means it: an id finds that record; for the
 * transaction history an amount (`40`, `1,234.50`) finds records of that amount; anything else is words (a
 * reference, a name, an email address). Too long a text is the 400 page, like any address that is not valid.
 */
export type Search = { kind: 'none' } | { kind: 'id'; id: string; text: string } | { kind: 'amount'; amountMinor: bigint; text: string } | { kind: 'words'; text: string };

/** An amount as people type it: digits with optional thousands commas and up to the fiat currencies' two decimals. */
const typedAmount = /^\d{1,3}(,\d{3})*(\.\d{1,2})?$|^\d+(\.\d{1,2})?$/;

export function searchOf(query: unknown, options: { amounts: boolean }): Search {
  const text = formText(formOf(query), 'q');
  if (text === undefined) return { kind: 'none' };
  if (text.length > dashboardSearchLengthMax) {
    throw new DomainError('VALIDATION_ERROR', `This page address is not valid: q: must be at most ${dashboardSearchLengthMax} characters.`);
  }
  if (isRecordId(text)) return { kind: 'id', id: text.toLowerCase(), text };
  if (options.amounts && typedAmount.test(text)) {
    try {
      // Every currency of the history (fiat) has two decimals: EUR stands for all of them.
      return { kind: 'amount', amountMinor: parseAmount(text.replaceAll(',', ''), 'EUR'), text };
    } catch (error) {
      if (!(error instanceof AmountError)) throw error;
    }
  }
  return { kind: 'words', text };
}

/** A search of a list of records (end users, payees) as their repositories take it: one id, words, or nothing. */
export function recordSearch(search: Search): { id: string } | { text: string } | Record<string, never> {
  if (search.kind === 'id') return { id: search.id };
  if (search.kind === 'none') return {};
  return { text: search.text };
}
