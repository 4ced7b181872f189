// Numeric limits of the fees module, named with their unit last (DESIGN §4 rule 5).

/** The largest flat fee, minimum or maximum an operator may set, in major units (the largest payment). */
export const feeScheduleAmountMax = 10_000_000;
/** Percentages are 0-100 % of the amount. */
export const feePercentageMax = 100;
export const feeScheduleNameLengthMax = 100;
/** Decimals of a percentage that millionths represent exactly: 0.0001 % is 1 millionth. */
export const feePercentageDecimalsMax = 4;
