import type { FastifyReply } from 'fastify';
import { formRefusal } from '../form.js';

/** Why a form was refused: the API's reasons in words, and its status (400 not valid, 422 not possible now). */
export interface FormRefusal {
  problems: string[];
  status: number;
}

/**
 * A form post (Post/Redirect/Get): runs the action, then answers 303 to the address it returns, so that reloading
 * the page it lands on repeats nothing. A refusal shows the form's page again with the reasons; an unknown (or
 * another customer's) id stays the 404 page, and anything else an error.
 */
export async function actThenRedirect(reply: FastifyReply, action: () => Promise<string>, refusedPage: (refusal: FormRefusal) => Promise<unknown>): Promise<unknown> {
  let location: string;
  try {
    location = await action();
  } catch (error) {
    const refusal = formRefusal(error);
    if (!refusal) throw error;
    return refusedPage(refusal);
  }
  return reply.redirect(location, 303);
}
