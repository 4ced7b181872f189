// Every numeric limit of spec §8 and of the decisions in docs/, named with its unit last.

/** Spec §4.5 and §8: page size default 50, clamped to 100; pages are 1-based. */
export const pageLimitDefault = 50;
export const pageLimitMax = 100;
export const pageDefault = 1;

/** Spec §4 POST /fiat-accounts and POST /virtual-accounts: accountName length 1-200. */
export const accountNameLengthMax = 200;

/** Default request body limit; routes that carry reports or files declare their own. */
export const bodyLimitDefaultBytes = 64 * 1024;

/** A presented API key longer than this is malformed without being hashed. */
export const apiKeyLengthMax = 128;
/** Random bytes behind every API key (the issue asks for at least 32). */
export const apiKeyRandomBytes = 32;
/** Characters of the key kept in clear as its display prefix (e.g. `sk_test_AbCd`). */
export const apiKeyDisplayPrefixLength = 12;
/** last_used_at is written at most this often per key, so reads stay reads. */
export const apiKeyLastUsedWriteIntervalMs = 60_000;
export const apiKeyScopesMax = 50;
export const apiKeyAllowedIpsMax = 100;

/** CSRF tokens are HMACs over a time window; a token is accepted in its window and the next. */
export const csrfWindowSeconds = 3600;

/** Requests per second per API key unless RATE_LIMIT_PER_SECOND says otherwise. */
export const rateLimitPerSecondDefault = 100;

/** An incoming X-Request-Id longer than this (or with other characters) is replaced. */
export const requestIdLengthMax = 128;
/** Rejected version tokens are echoed in X-API-Version, cut to this length. */
export const rejectedVersionEchoLengthMax = 32;

export const customerNameLengthMax = 200;

/** Graceful shutdown gives in-flight requests this long before the process exits anyway. */
export const shutdownTimeoutMsDefault = 10_000;
