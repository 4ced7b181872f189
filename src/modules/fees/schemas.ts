import { Type, type Static } from 'typebox';

/** docs/spec.md §2 fee preview result; the request is the payment's (payments/schemas.ts FeePreviewBody). */
import { Nullable, StringEnum, Uuid } from '../../http/schemas.js';
import { fiatCurrencies } from '../../ledger/assets.js';

const Money = (description: string) => Type.Number({ description: `${description}, major units of fee_currency as a JSON number` });

/** docs/spec.md §2 fee preview result. */
export const FeePreview = Type.Object(
  {
    fee_amount: Money('The fee a payment with these details is charged: raw_total clamped to the minimum and maximum'),
    fee_currency: StringEnum(fiatCurrencies, { description: 'The currency of the request' }),
    schedule_id: Uuid,
    schedule_name: Type.String(),
    umbrella_link_id: Nullable(Uuid),
    goat_member_code: Nullable(Type.String({ description: 'Meaning not shown in the spec; always null (docs/fees.md)' })),
    breakdown: Type.Object(
      {
        flat_fee: Money('The flat part'),
        percentage_fee: Type.Number({ description: 'The rate in percent of the amount (0.25 means 0.25 %)' }),
        percentage_amount: Money('amount × percentage_fee / 100, rounded half-up to the minor unit'),
        raw_total: Money('flat_fee + percentage_amount, before the minimum and maximum'),
        min_applied: Type.Boolean({ description: 'raw_total was below the minimum fee; fee_amount is the minimum' }),
        max_applied: Type.Boolean({ description: 'raw_total was above the maximum fee; fee_amount is the maximum' }),
      },
      { additionalProperties: false },
    ),
  },
  { title: 'FeePreview', additionalProperties: false },
);
export type FeePreviewRecord = Static<typeof FeePreview>;
