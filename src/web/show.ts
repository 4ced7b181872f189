import { codeWords } from './code-words.js';
import { moneyText, signedMoneyText } from './money-text.js';
import { exactTimeText, machineTime, timeText } from './time-text.js';

/**
 * The formatters every page template calls as `it.show.…` (renderPage passes them; an include inherits them):
 * one way to write an amount, a time and a code on every page. Templates show times through the `/time` partial,
 * which puts the three time texts in one `<time>` element.
 */
export const show = {
  money: moneyText,
  signedMoney: signedMoneyText,
  time: timeText,
  exactTime: exactTimeText,
  machineTime,
  words: codeWords,
} as const;
