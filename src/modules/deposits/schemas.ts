import { Type } from 'typebox';
import { counterpartyNameLengthMax, paymentAmountMax, paymentReferenceLengthMax } from '../../config/limits.js';
import { Uuid } from '../../http/schemas.js';

/** The account credited: a fiat account's id, or a virtual account's. */
export const DepositParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const DepositBody = Type.Object(
  {
    amount: Type.Number({ exclusiveMinimum: 0, maximum: paymentAmountMax }),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: paymentReferenceLengthMax })),
    counterpartyName: Type.Optional(Type.String({ minLength: 1, maxLength: counterpartyNameLengthMax })),
  },
  { title: 'SandboxCreateFiatDepositRequest', additionalProperties: false },
);
