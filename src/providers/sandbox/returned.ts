import { DomainError } from '../../errors.js';
import type { ProviderEventType, ReportedProviderEvent } from '../events.js';
import type { ProviderEventInbox } from '../inbox.js';

/**
 * Reports a step that takes money out of an account (a payment's completion, an OTC order's debit). A bank or
 * liquidity provider takes none from an account frozen or closed meanwhile: when the lifecycle refuses the step
 * (ACCOUNT_NOT_ACTIVE), the sandbox reports `failed` instead, saying why, under the key `timer:<id>:returned` so a
 * pass taken over after a crash reports the same event, not a new one. Answers which of the two it reported.
 */
export async function reportOrReturn(inbox: ProviderEventInbox, step: ReportedProviderEvent, timerId: string, failed: ProviderEventType): Promise<'step' | 'returned'> {
  try {
    await inbox.report(step);
    return 'step';
  } catch (error) {
    if (!(error instanceof DomainError && error.code === 'ACCOUNT_NOT_ACTIVE')) throw error;
    await inbox.report({ ...step, type: failed, idempotencyKey: `timer:${timerId}:returned`, payload: { reason: error.message } });
    return 'returned';
  }
}
