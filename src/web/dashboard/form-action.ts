import type { FastifyReply } from 'fastify';
import { refusedForm, type FieldLabels, type FormBody, type FormState } from '../form.js';

/** Why a form was refused: its problems in words, its state (as typed, each problem by its field), the API's status (400 not valid, 422 not possible now). */
export interface FormRefusal {
  problems: FormState['summary'];
  form: FormState;
  status: number;
}

/**
 * A form post (Post/Redirect/Get): runs the action, then answers 303 to the address it returns, so that reloading
 * the page it lands on repeats nothing. A refusal shows the form's page again with the reasons, each by the field
 * `fields.labels` names for it and with what was `fields.sent` kept; an unknown (or another customer's) id stays
 * the 404 page, and anything else an error.
 */
export async function actThenRedirect(
  reply: FastifyReply,
  action: () => Promise<string>,
  refusedPage: (refusal: FormRefusal) => Promise<unknown>,
  fields: { sent: FormBody; labels: FieldLabels } = { sent: {}, labels: {} },
): Promise<unknown> {
  let location: string;
  try {
    location = await action();
  } catch (error) {
    const refusal = refusedForm(error, fields.sent, fields.labels);
    if (!refusal) throw error;
    return refusedPage(refusal);
  }
  return reply.redirect(location, 303);
}
