// Every numeric limit of docs/spec.md §8 and of the decisions in docs/, named with its unit last. A module may keep its own in
// its limits.ts, re-exported here; nowhere else holds a numeric limit (test/fitness/limits.test.ts).

export * from '../modules/fees/limits.js';
export * from '../modules/payees/limits.js';

/** docs/spec.md §4.5 and §8: page size default 50, clamped to 100; pages are 1-based. */
export const pageLimitDefault = 50;
export const pageLimitMax = 100;
export const pageDefault = 1;
/** The highest page number a list accepts (the operator CLI's `customers list --page`). */
export const pageMax = 1_000_000_000;

/** docs/spec.md §8: payment amounts (and fee previews, deposits) are greater than 0 and at most 10,000,000 major units. */
export const paymentAmountMax = 10_000_000;
/**
 * docs/spec.md §4 POST /payments: reference length 1-200. Deposits take the same bound, and so do the `reference` filters
 * of GET /payments and GET /transactions (a longer one could match nothing).
 */
export const paymentReferenceLengthMax = 200;

/** docs/spec.md §4 POST /fiat-accounts and POST /virtual-accounts: accountName length 1-200. */
export const accountNameLengthMax = 200;

/** A request must have arrived whole (headers and body) within this time (Node's default for http servers). */
export const requestTimeoutMs = 300_000;

/** Default request body limit; routes that carry reports or files declare their own. */
export const bodyLimitDefaultBytes = 64 * 1024;

/** A presented API key longer than this is malformed without being hashed. */
export const apiKeyLengthMax = 128;
/** Random bytes behind every API key (256 bits: not guessable, not enumerable). */
export const apiKeyRandomBytes = 32;
/** Characters of the key kept in clear as its display prefix (e.g. `sk_test_AbCd`). */
export const apiKeyDisplayPrefixLength = 12;
/**
 * A known key is looked up again after this long: a key revoked by another process (the CLI) stops working within
 * it; one revoked through this process stops at once (docs/authentication.md "Revocation").
 */
export const apiKeyCacheTtlMs = 2_000;
export const apiKeyCacheEntriesMax = 10_000;
/** Fee schedules, which the operator sets from another process, are read again after this long. */
export const feeScheduleCacheTtlMs = 5_000;
export const feeScheduleCacheEntriesMax = 10_000;
/** What never changes about an account or a payee (its owner, currency, name, details), kept for this many. */
export const descriptorCacheEntriesMax = 50_000;
/**
 * An account or payee descriptor also carries its status, which the provider changes: it is read again after this
 * long, so a change made through another instance applies to payments within it; through this one, at once
 * (docs/operations.md "Caches").
 */
export const accountStatusCacheTtlMs = 2_000;
/** last_used_at is written at most this often per key, so reads stay reads. */
export const apiKeyLastUsedWriteIntervalMs = 60_000;
export const apiKeyScopesMax = 50;
export const apiKeyAllowedIpsMax = 100;
/** A key's optional name ("CI deploys"), shown in lists: one line of at most this many characters. */
export const apiKeyNameLengthMax = 100;

/** CSRF tokens are HMACs over a time window; a token is accepted in its window and the next. */
export const csrfWindowSeconds = 3600;

/** Requests per second per API key unless RATE_LIMIT_PER_SECOND says otherwise. */
export const rateLimitPerSecondDefault = 100;
/** Requests per second per client address, counted before authentication, unless RATE_LIMIT_PER_IP_PER_SECOND says otherwise. */
export const rateLimitPerIpPerSecondDefault = 1000;
/** Refused authentications (401/403) per client address per minute, unless RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE says otherwise. */
export const rateLimitFailedAuthPerIpPerMinuteDefault = 60;

/**
 * Rate-limit counters in Redis (http/redis-count-store.ts, docs/operations.md "Rate limits"): each call answers
 * within this deadline unless RATE_LIMIT_REDIS_TIMEOUT_MS says otherwise, or the instance counts it itself.
 */
export const rateLimitRedisTimeoutMsDefault = 5;
export const rateLimitRedisTimeoutMsMax = 1000;
/** Consecutive calls that missed their deadline or failed, after which Redis is not asked for a while. */
export const rateLimitRedisFailuresToOpen = 3;
/** How long Redis is not asked after that, before one call tries it again; each instance adds up to half again at random. */
export const rateLimitRedisCoolDownMs = 1000;
/** The rate limits' Redis client: a connection not made within this is given up and retried (start-up waits no longer). */
export const redisConnectTimeoutMs = 1000;
/** Reconnections back off exponentially from the first delay up to the last, with jitter. */
export const redisReconnectDelayMsMin = 50;
export const redisReconnectDelayMsMax = 2000;

/** Without Redis (and while it is away), each limiter counts at most this many keys in memory, the most recent ones. */
export const rateLimitLocalCountersMax = 5000;

/** An incoming X-Request-Id longer than this (or with other characters) is replaced. */
export const requestIdLengthMax = 128;
/** Rejected version tokens are echoed in X-API-Version, cut to this length. */
export const rejectedVersionEchoLengthMax = 32;

export const customerNameLengthMax = 200;

/** The metrics listener's port unless METRICS_PORT says otherwise (the Prometheus exporter port of OpenTelemetry). */
export const metricsPortDefault = 9464;

/** Graceful shutdown gives in-flight requests this long before the process exits anyway. */
export const shutdownTimeoutMsDefault = 10_000;
/**
 * Stopping, a kept-alive connection on which no byte arrives for this long is closed (http/connection-drain.ts):
 * clients sending one request after another get their next request answered (503, `Connection: close`) well within
 * it; a client quiet this long is not sending. Well below the shutdown timeout, so the process still exits cleanly.
 */
export const shutdownIdleConnectionGraceMs = 2_000;

/**
 * How far (percent) V8 lets the old generation grow beyond what a full collection kept (src/heap-growth.ts), for the
 * server's whole life; V8's own factor after a burst of promotion (start-up, webhook deliveries) is 300 %.
 */
export const heapGrowingPercent = 50;

/** docs/spec.md §4 POST /end-users and PATCH /end-users: field limits (those "not shown" are decided in docs/end-users.md). */
export const personNameLengthMax = 100;
export const emailLengthMax = 255;
export const phoneLengthMax = 20;
export const ipAddressLengthMax = 45;
export const tagsMax = 20;
export const tagLengthMax = 100;
export const linkedCryptoWalletsMax = 50;
export const walletRelationshipsMax = 10;
export const onboardingUrlTokenLengthMax = 100;
export const addressLineLengthMax = 200;
export const cityLengthMax = 100;
export const postalCodeLengthMax = 20;
export const stateLengthMax = 100;
/** metadata: any JSON object with at most 50 keys of 1-40 characters, nested at most 5 levels, at most 16 KiB as JSON. */
export const metadataKeysMax = 50;
export const metadataKeyLengthMax = 40;
export const metadataDepthMax = 5;
export const metadataBytesMax = 16 * 1024;
/**
 * identificationDocument and reverseSolicitationAttestation, whose inner fields docs/spec.md §4 does not show: any JSON
 * object with at most 50 members, nested at most 5 levels, at most 4 KiB as JSON (documents themselves go to
 * POST /documents).
 */
export const openObjectKeysMax = 50;
export const openObjectDepthMax = 5;
export const openObjectBytesMax = 4 * 1024;
export const companyNameLengthMax = 200;
export const registrationNumberLengthMax = 100;
export const websiteLengthMax = 255;
export const businessPersonsMax = 25;

/** docs/spec.md §8: report upload strings (kyc, kyb, provider) are 1-14,680,064 characters. */
export const reportLengthMax = 14_680_064;
/** What the longest report string decodes to: every report the spec's length allows fits. */
export const reportSizeMaxBytes = (reportLengthMax / 4) * 3;
export const reportFileNameLengthMax = 255;
/** Two reports at their maximum plus the rest of an end-user body. */
export const endUserBodyLimitBytes = 2 * reportLengthMax + 1024 * 1024;

/** docs/spec.md §4 POST /documents: fileName 1-255; decoded files up to 10 MiB (docs/documents.md). */
export const documentFileNameLengthMax = 255;
export const documentSizeMaxBytes = 10 * 1024 * 1024;
/**
 * Characters of the base64 of the largest file, broken into lines as encoders do: the shortest lines in use are
 * 60 characters (Ruby's encode64), the longest line end CRLF, so at most 2 extra characters per 60.
 */
export const documentBase64LengthMax = Math.ceil((Math.ceil(documentSizeMaxBytes / 3) * 4 * 62) / 60);
/**
 * That base64 as it travels in JSON, where a line break is escaped (CRLF is the 4 bytes `\r\n`), plus the JSON
 * around it.
 */
export const documentBodyLimitBytes = Math.ceil((Math.ceil(documentSizeMaxBytes / 3) * 4 * 64) / 60) + 64 * 1024;
/** Large-body requests read at once per process unless UPLOAD_CONCURRENCY says otherwise (http/upload-gate.ts). */
export const uploadConcurrencyDefault = 2;
/**
 * Of those, one customer's at once through its API keys (and as many for each hosted onboarding link, on its own)
 * unless UPLOAD_CONCURRENCY_PER_CUSTOMER says otherwise: one customer cannot take every permit of a process, and
 * whoever holds a link cannot take the customer's.
 */
export const uploadConcurrencyPerCustomerDefault = 1;
/**
 * A large body that arrives slower than this over the last rate window is cut (408), unless
 * UPLOAD_MIN_BYTES_PER_SECOND and UPLOAD_RATE_WINDOW_MS say otherwise. 8 KiB/s is 64 kbit/s, below any mobile data
 * link but GPRS; a body that stops arriving gives its permit back within about one window.
 */
export const uploadMinBytesPerSecondDefault = 8 * 1024;
export const uploadRateWindowMsDefault = 5_000;
export const uploadRateWindowMsMin = 100;
/** The rate window slides in steps of this fraction of it. */
export const uploadRateStepsPerWindow = 5;
/** Stored document bytes per customer unless DOCUMENT_STORAGE_QUOTA_BYTES says otherwise: 1 GiB. */
export const documentStorageQuotaBytesDefault = 1024 * 1024 * 1024;
/** Provider sync of stored documents: attempts before `failed`, and the backoff between them. */
export const documentSyncAttemptsMax = 6;
export const documentSyncBackoffBaseMs = 1000;
export const documentSyncBackoffMaxMs = 5 * 60 * 1000;

/**
 * PostgreSQL: money operations of one customer let into the database at once per process, unless
 * MONEY_OPERATIONS_PER_CUSTOMER says otherwise. They take the customer's history-sequence row lock one after another
 * in the database: two in flight keep that lock busy (one runs while the next is ready), more would only wait inside
 * PostgreSQL, each holding a pooled connection. Measured on the 2-core benchmark machine: throughput of one
 * customer's payments is highest at 2 (docs/benchmarks.md).
 */
export const moneyOperationsPerCustomerDefault = 2;

/**
 * Sandbox settlement workers (workers/claim.ts): a claimed settlement is its instance's this long unless
 * SETTLEMENT_LEASE_SECONDS says otherwise; then, if still due, any instance takes it. An instance that stopped
 * mid-pass delays its settlements by as much.
 */
export const settlementLeaseSecondsDefault = 60;
/** How long a batch of outbox events claimed for the webhook fan-out is its instance's, unless WEBHOOK_FAN_OUT_LEASE_SECONDS says otherwise. */
export const webhookFanOutLeaseSecondsDefault = 60;

/**
 * The provider events inbox (providers/inbox.ts, docs/providers.md "Reporting outcomes"): a reported event's JSON
 * payload is at most this long; a claimed event is its instance's for the lease; an event whose application keeps
 * failing for another reason than a refusal (the database away) is tried this many times, waiting longer each time,
 * then left failed for an operator.
 */
export const providerEventPayloadBytesMax = 16 * 1024;
export const providerEventIdempotencyKeyLengthMax = 255;
export const providerEventReferenceLengthMax = 255;
export const providerEventBatchSize = 50;
/** How long a claimed event, or a reported one, is its holder's: past it, the worker takes it (its holder died). */
export const providerEventLeaseMs = 60_000;
export const providerEventAttemptsMax = 8;
/** How long a reported event waits for earlier events of its reference, and for whoever holds it already, to be applied; and how often it looks. */
export const providerEventEarlierWaitMs = 5000;
export const providerEventEarlierPollMs = 10;
export const providerEventBackoffBaseMs = 1000;
export const providerEventBackoffMaxMs = 10 * 60_000;
/** An error kept on an event that did not apply is cut to this length. */
export const providerEventErrorLengthMax = 500;

/**
 * The HTTP provider adapter (docs/providers.md "The HTTP adapter"): a signed request whose timestamp is further than
 * this from now is refused (a replay); what the provider answers is read up to this many characters; the route its
 * outcomes arrive at takes bodies up to the event payload limit and a little for the envelope.
 */
export const httpProviderTimestampToleranceSeconds = 5 * 60;
export const httpProviderErrorLengthMax = 500;
export const httpProviderEventBodyBytesMax = providerEventPayloadBytesMax + 2048;
/** PAYMENT_PROVIDER_SECRET: bytes the shared signing secret carries at least (Standard Webhooks asks for 24 to 64). */
export const httpProviderSecretBytesMin = 24;
/** The provider named in POST /provider-events/{provider}. */
export const providerNameLengthMax = 64;

/** Sandbox: how often background workers look for due work. */
export const workerPollIntervalMs = 250;

/**
 * Storage faults (docs/operations.md "Faults"). A 503 or 507 tells the client to retry after a whole number of
 * seconds drawn between these two, so the clients of a database that comes back do not all return at once.
 */
export const storageFaultRetryAfterSecondsMin = 1;
export const storageFaultRetryAfterSecondsMax = 5;
/**
 * A worker pass that met a storage fault waits twice as long as the last one each time, from the first to at most
 * the second, with jitter; the next pass that succeeds resumes the normal pace.
 */
export const workerFaultBackoffBaseMs = 500;
export const workerFaultBackoffMaxMs = 30_000;
/** GET /ready answers 503 when the database does not answer `select 1` within this long. */
export const readinessProbeTimeoutMs = 1_000;
/**
 * GET /ready keeps answering 503 this long after a request or worker last met a storage fault, unless a write
 * succeeded since: a SQLite file that reached its size limit looks fine to a cheap probe.
 */
export const readinessFaultHoldMs = 10_000;
/** SQLite: GET /ready answers 503 when the data directory's file system has less free space than this. */
export const dataDirectoryFreeBytesMin = 1024 * 1024;
/**
 * PostgreSQL: a new connection that is not established within this long fails (a database that does not answer
 * at all, a black hole): requests then answer 503 instead of waiting the pool's whole queue time.
 */
export const postgresConnectTimeoutMs = 5_000;
/** PostgreSQL: TCP keepalive on every connection from this much idle time, so a dead peer is noticed. */
export const postgresKeepAliveInitialDelayMs = 10_000;
/**
 * PostgreSQL: a transaction whose connection failed before its COMMIT was sent (nothing can have been committed)
 * is run again this many times at most, after waits doubling from the base, with jitter (src/storage/database.ts).
 */
export const connectionRetryAttemptsMax = 3;
export const connectionRetryBaseMs = 100;

/** Idempotency-Key (docs/idempotency.md): how long a reservation is its request's, and how long keys are kept. */
export const idempotencyLeaseSecondsDefault = 60;
export const idempotencyRetentionHoursDefault = 24;
/**
 * A request renews its key's lease this many times per lease while it runs: a renewal that fails or comes late
 * (the database slow, the event loop busy) leaves two more chances before the lease runs out under the request.
 */
export const idempotencyLeaseRenewalsPerLease = 3;
/** docs/spec.md §4 rule 8 replays a retry: a key is kept at least a day, so a client retrying the next morning is safe. */
export const idempotencyRetentionHoursMin = 24;
/**
 * The reaper (workers/reaper.ts, docs/operations.md "Retention"): rows of each kind deleted per statement — small, so
 * no statement holds its locks for long — and how often it looks again once it found nothing to delete.
 */
export const reaperBatchRows = 500;
export const reaperIntervalMs = 60_000;

/** Wallets (docs/wallets.md): per customer, and receive addresses per wallet (every list has a bound). */
export const walletsPerCustomerMax = 1000;
export const addressesPerWalletMax = 100;
/**
 * A wallet's balance of one asset stays at most 10^18 base units (10^12 USDC, 10^10 BTC, 10^9 ETH): far beyond any
 * holding, and far from the largest signed 64-bit integer the column holds (~9.2 × 10^18). A deposit beyond it is refused.
 */
export const walletBalanceCeilingMinor = 10n ** 18n;
/** One transfer or deposit moves at most 10^15 base units (10^9 USDC, 10^7 BTC, 10^6 ETH or SOL). */
export const walletAmountMaxMinor = 10n ** 15n;
/** docs/spec.md §4 POST /wallets: displayName 1-100. */
export const walletDisplayNameLengthMax = 100;
/** docs/spec.md §4 POST /wallets/{walletId}/addresses: asset 1-20, network 1-50 characters. */
export const walletAssetLengthMax = 20;
export const walletNetworkLengthMax = 50;
/** docs/spec.md §4 POST /wallets/{walletId}/transfers: destination 5-200 characters, note at most 500. */
export const walletTransferDestinationLengthMin = 5;
export const walletTransferDestinationLengthMax = 200;
export const walletTransferNoteLengthMax = 500;

/** OTC exchange (docs/otc.md). docs/spec.md §8: a quote's source amount is at least 20 EUR, with at most 2 decimals. */
export const otcSourceAmountMinEur = 20;
/** docs/architecture.md, Operator contract: quotes live OTC_QUOTE_TTL_SECONDS unless configured otherwise. */
export const otcQuoteTtlSecondsDefault = 30;
/**
 * A quote never confirmed is kept this long past its expiry, so a late confirmation is told it expired (422
 * QUOTE_EXPIRED) rather than that it does not exist; then the reaper deletes it. A confirmed quote stays with its order.
 */
export const otcQuoteKeptAfterExpiryMs = 24 * 60 * 60 * 1000;
/** The platform's spread on the mid rate, in basis points, unless OTC_SPREAD_BPS says otherwise; at most 10 %. */
export const otcSpreadBpsDefault = 30;
export const otcSpreadBpsMax = 1000;
/** Decimals of an exchange rate (destination units per 1 EUR). */
export const otcRateDecimals = 8;
/** A confirmation's travelRulePayload: any JSON object of at most this many bytes. */
export const travelRulePayloadBytesMax = 16 * 1024;

/** Webhooks (docs/webhooks.md). docs/spec.md §8: at most 10 subscriptions per customer, 1-50 event types each. */
export const webhookSubscriptionsPerCustomerMax = 10;
export const webhookEventTypesMin = 1;
export const webhookEventTypesMax = 50;
/** docs/spec.md §4 PATCH /webhooks/{id}: url at most 2048 characters, description at most 500. */
export const webhookUrlLengthMax = 2048;
export const webhookDescriptionLengthMax = 500;
/** Random bytes of a signing secret (`whsec_` + base64); Standard Webhooks asks for 24 to 64. */
export const webhookSecretRandomBytes = 32;
/** Characters of the secret shown as `signing_secret_prefix`: `whsec_` and the first six of the key. */
export const webhookSecretPrefixLength = 12;
/** After a rotation, deliveries are signed with the old secret too for this long. */
export const webhookPreviousSecretTtlMs = 24 * 60 * 60 * 1000;
/** docs/architecture.md, Operator contract: the default retry schedule is Svix's, 5s, 5m, 30m, 2h, 5h, 10h, 10h (WEBHOOK_RETRY_DELAYS). */
export const webhookRetryDelaysMsDefault: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** With WEBHOOK_DISABLE_AFTER unset, a subscription is disabled after failing this long (and the schedule exhausted). */
export const webhookDisableAfterFailingMsDefault = 5 * 24 * 60 * 60 * 1000;
/** One delivery attempt, connection included, unless WEBHOOK_TIMEOUT_MS says otherwise. */
export const webhookTimeoutMsDefault = 10_000;
/**
 * Attempts one process makes at once, overall and to one subscription (docs/webhooks.md "Fairness"): enough to keep
 * a receiver answering in a few milliseconds at thousands of events per second, few enough that one subscription
 * takes an eighth of the slots.
 */
export const webhookAttemptsInFlightMax = 256;
export const webhookAttemptsInFlightPerSubscriptionMax = 32;
/**
 * Deliveries claimed ahead, waiting in memory for a slot of their subscription (docs/webhooks.md "Delivery"): per
 * subscription, and in all, apart from the attempts in flight. A slot freed by an answer is refilled at once from them
 * instead of after a claim's round trips, and each claim takes more at a time. Waiting ones of a receiver that does not
 * answer are released after half the timeout (attemptLeaseMs), and never take an attempt's slot from another customer.
 */
export const webhookDeliveriesWaitingPerSubscriptionMax = 128;
export const webhookDeliveriesWaitingMax = 256;
/** Signing keys the delivery worker keeps opened (beyond, it forgets them all and opens them again as needed). */
export const webhookSigningKeysCachedMax = 10_000;
/** Ended attempts recorded by one transaction at most (those that ended while the previous one committed). */
export const webhookAttemptsRecordedPerTransactionMax = 256;
/** Outbox events turned into deliveries per pass of the fan-out worker. */
export const webhookFanOutBatchSize = 500;
/** Bytes of a receiver's answer that are read (then the connection is dropped). */
export const webhookResponseBytesMax = 64 * 1024;
/** A Retry-After longer than this is cut to it. */
export const webhookRetryAfterMsMax = 24 * 60 * 60 * 1000;
/** Characters of an attempt's error kept. */
export const webhookErrorLengthMax = 500;
/**
 * How long events, webhook deliveries and their attempts are kept unless EVENT_RETENTION_DAYS says otherwise, and
 * so how far back POST /webhooks/{id}/replay reaches (docs/webhooks.md "Retention").
 */
export const eventRetentionDays = 30;
export const eventRetentionDaysMin = 1;
export const eventRetentionDaysMax = 3650;
/** POST /webhooks/{id}/replay queues at most this many events per call; `next_since` continues. */
export const webhookReplayEventsMax = 10_000;
/** Attempts listed with each delivery, most recent first. */
export const webhookAttemptsListedMax = 20;
/**
 * The backlog gauge counts due deliveries up to this many (docs/operations.md "Metrics"): a scrape reads at most that
 * many index entries however far delivery has fallen behind; past it, the oldest due delivery's age tells more.
 */
export const webhookBacklogCountedMax = 10_000;
/** Bytes of a receiver's answer kept with the attempt, as text (the rest is read up to webhookResponseBytesMax and dropped). */
export const webhookResponseBodyStoredBytesMax = 4 * 1024;
/** A receiver's answer headers kept with the attempt: at most this many, each value cut to the length below. */
export const webhookResponseHeadersStoredMax = 50;
export const webhookResponseHeaderValueLengthMax = 1024;
/** A subscription's health counts its attempts over this window (GET /webhooks/{id}/health). */
export const webhookHealthWindowMs = 24 * 60 * 60 * 1000;

/** Customer dashboard (docs/dashboard.md). A one-time sign-in link works this long (CLI users create / users link). */
export const dashboardSignInLinkTtlMs = 24 * 60 * 60 * 1000;
/** Session timeouts unless DASHBOARD_SESSION_IDLE_MINUTES / DASHBOARD_SESSION_MAX_HOURS say otherwise. */
export const dashboardSessionIdleMinutesDefault = 30;
export const dashboardSessionMaxHoursDefault = 12;
/** A session's last use is written at most this often, so idle expiry costs no write per page. */
export const dashboardSessionTouchIntervalMs = 60_000;
/**
 * The replay form's earliest date is this much inside the replay window, rounded up to the minute, so that the date
 * it offers is still accepted when the form is sent within this time.
 */
export const dashboardReplayFormMarginMs = 10 * 60 * 1000;
/** The replay form suggests this far back by default: a day, the usual span of an outage to redeliver. */
export const dashboardReplaySuggestedSpanMs = 86_400_000;
/** The dashboard overview's recent activity: this many of the newest transactions. */
export const overviewRecentTransactions = 10;
/**
 * How deep the OpenAPI document's example builder follows nested schemas (http/openapi-document.ts): deeper than any
 * record (the business end user's persons' addresses are 5 levels), and a bound should a schema ever refer to itself.
 */
export const openApiExampleDepthMax = 12;
/** Sign-in attempts (right or wrong) per client address and per email address in one window. */
export const dashboardSignInAttemptsMax = 10;
export const dashboardSignInWindowMs = 15 * 60 * 1000;
/** Passwords: NIST SP 800-63B asks for at least 8 characters; long passphrases are welcome, up to a bound. */
export const dashboardPasswordLengthMin = 12;
export const dashboardPasswordLengthMax = 200;
export const dashboardEmailLengthMax = 254;
/** Random bytes of session ids and sign-in link tokens (base64url in cookies and URLs). */
export const dashboardTokenRandomBytes = 32;
/** Bytes of a dashboard form body (uploads excepted: the hosted onboarding page takes a document). */
export const dashboardFormBytesMax = 64 * 1024;
/**
 * The dashboard's CSV export of the transaction history: records read per batch (one keyset query each), and the
 * most one download holds (narrower filters, e.g. a date range, export the rest).
 */
export const dashboardExportBatchSize = 500;
/** The dashboard shows a crypto amount to its significant decimals, but at least this many (`2,500.00 USDC`). */
export const dashboardCryptoDecimalsMin = 2;
export const dashboardExportRowsMax = 100_000;
/** Fiat and virtual accounts the dashboard's transaction filter offers, of each kind (the newest). */
export const dashboardAccountChoicesMax = 100;
/** Fiat accounts, virtual accounts and wallets shown per page of each list of the dashboard's accounts page. */
export const dashboardAccountsPerPage = 20;
/**
 * End users a form that names one by its name, email address or id lists to choose from when several match (the
 * newest); more than this, and the person types more of it (docs/dashboard.md "Choosing an end user").
 */
export const dashboardEndUserMatchesMax = 10;
/** Characters of the dashboard's search boxes: the longest thing searched for is an email address (254). */
export const dashboardSearchLengthMax = 254;
/**
 * A secret shown once (a new API key, a webhook signing secret) waits this long for its reveal page, sealed: long
 * enough for a slow redirect, short enough that an abandoned one does not linger (docs/dashboard.md "Forms").
 */
export const dashboardRevealTtlMs = 10 * 60 * 1000;
/** The notice carried across a redirect lives in a cookie this long: it is read by the very next page. */
export const dashboardNoticeCookieMaxAgeSeconds = 60;
/** The most text a notice cookie carries (cookies are 4 KB at most; notices are a sentence or two). */
export const dashboardNoticeLengthMax = 1000;
/** A customer's display name on its hosted onboarding page, and its logo's URL (docs/dashboard.md "Settings"). */
export const customerDisplayNameLengthMax = 100;
export const customerLogoUrlLengthMax = 2048;
/** Hex digits of an asset's SHA-256 in its address (`pages.<hash>.css`): enough that two versions never share one. */
export const assetHashLength = 16;
/** Sign-in returns to the page first asked for: an address of at most this many characters (longer: the overview). */
export const dashboardReturnPathLengthMax = 2000;

/** Hosted onboarding (docs/dashboard.md "Hosted onboarding"): how long an issued link opens the page. */
export const onboardingLinkTtlMs = 7 * 24 * 60 * 60 * 1000;
/**
 * Random bytes of the onboarding_url_token issued when the customer sends none: only a label (the link's secret is
 * what opens the page), unique in practice.
 */
export const onboardingTokenRandomBytes = 16;

/** Server secrets (docs/operations.md "Server secrets", storage/server-secrets.ts serverSecretNames): random bytes of each. */
export const serverSecretRandomBytes = 32;
/** A master key is an AES-256 key; SECRETS_MASTER_KEY lists at most this many (the newest, then older ones). */
export const secretsMasterKeyBytes = 32;
export const secretsMasterKeysMax = 10;
/** SECRETS_MASTER_KEY_FILE is read only if it is at most this long (ten keys and separators fit easily). */
export const secretsMasterKeyFileBytesMax = 4096;
/** Hex characters of a master key's id, stored beside each secret it wraps. */
export const secretsMasterKeyIdLength = 16;

/**
 * Bounds of the settings (config/settings.ts) that have no other limit here: what an operator may set, beyond which
 * a value is a typo, not a choice.
 */
export const tcpPortMax = 65_535;
export const portDefault = 3000;
export const shutdownTimeoutMsMax = 10 * 60 * 1000;
export const databasePoolSizeDefault = 10;
export const databasePoolSizeMax = 1000;
export const moneyOperationsPerCustomerMax = 1000;
/** Any of the three rate limits (per second per key or address, refusals per minute per address). */
export const rateLimitMax = 1_000_000;
export const idempotencyLeaseSecondsMax = 24 * 60 * 60;
export const idempotencyRetentionHoursMax = 365 * 24;
/** UPLOAD_CONCURRENCY and UPLOAD_CONCURRENCY_PER_CUSTOMER. */
export const uploadConcurrencyMax = 1000;
export const uploadMinBytesPerSecondMax = 1_000_000_000;
/** Sandbox: payments, transfers and OTC steps settle this long after creation unless SANDBOX_AUTO_SETTLE_MS says otherwise. */
export const sandboxAutoSettleMsDefault = 2000;
export const sandboxAutoSettleMsMax = 24 * 60 * 60 * 1000;
/** SETTLEMENT_LEASE_SECONDS and WEBHOOK_FAN_OUT_LEASE_SECONDS. */
export const leaseSecondsMax = 3600;
export const otcQuoteTtlSecondsMax = 3600;
/** WEBHOOK_RETRY_DELAYS: each delay at most a week, at most 20 of them. */
export const webhookRetryDelayMsMax = 7 * 24 * 60 * 60 * 1000;
export const webhookRetryDelaysMax = 20;
export const webhookDisableAfterAttemptsMax = 1_000_000;
export const webhookTimeoutMsMin = 100;
export const webhookTimeoutMsMax = 120_000;
export const dashboardSessionIdleMinutesMax = 7 * 24 * 60;
export const dashboardSessionMaxHoursMax = 30 * 24;

/*
 * Limits of the internals (workers, storage, providers, dashboard), kept here with the rest so that every bound of
 * the server is in one place.
 */

/** The windows of the rate limits: per second for requests, per minute for refused authentications. */
export const rateLimitFailedAuthWindowMs = 60_000;
export const rateLimitWindowMs = 1000;
/** .env.example (config/settings-docs.ts): comment lines of at most this many characters, like the rest of the repository. */
export const envExampleLineLengthMax = 120;
/** A decimal string longer than this is refused before its digits are read (the largest amounts have ~13). */
export const decimalTextLengthMax = 40;
/** `customer-api ledger check` lists at most this many problems (and counts them all). */
export const ledgerProblemsShownMax = 1000;
/** Width of the IPv4-mapped prefix ::ffff:0:0/96 (RFC 4291 §2.5.5.2). */
export const ipv4MappedPrefixLength = 96;
/**
 * Dashboard passwords are stored as scrypt hashes (RFC 7914) with their parameters, so the cost can be raised later
 * without invalidating stored hashes: `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` (base64url). N = 2^16, r = 8, p = 2 is
 * one of OWASP's recommended settings (64 MiB per hash).
 */
export const scryptCostLog2 = 16;
export const scryptBlockSize = 8;
export const scryptParallelization = 2;
export const passwordHashBytes = 32;
export const passwordSaltBytes = 16;
/** scrypt takes 128 · N · r bytes of memory (RFC 7914). */
export const scryptMemoryBytesPerCostUnit = 128;
/** Random bytes of the decoy password whose hash makes an unknown email cost a sign-in as much as a wrong password. */
export const decoyPasswordRandomBytes = 16;
/** Documents claimed per pass; the polling worker runs the next pass at once while passes find work. */
export const documentSyncBatchSize = 20;
/** A provider call that has not answered by then counts as a failed attempt (the worker must not hang). */
export const documentSyncCallTimeoutMs = 60_000;
/**
 * How long a claimed attempt keeps its document away from other instances. Longer than the call timeout, so the
 * lease only runs out when the instance that claimed it stopped mid-attempt; the document is then due again.
 */
export const documentSyncLeaseMs = 5 * 60_000;
/** Provider error messages are kept for the client, cut to this length. */
export const documentSyncErrorLengthMax = 500;
/** Files older than this that no row records are orphans (a stopped process, a failed discard): removed. */
export const orphanFileAgeMs = 60 * 60_000;
/** How often the orphan files of the document store are looked for. */
export const orphanFileSweepIntervalMs = 60 * 60_000;
/** The secret: HMAC-SHA256, 32 bytes, in base64url. */
export const onboardingSecretLength = 43;
/** docs/spec.md §4 POST /payments: payeeVerificationId up to 100 characters (paymentScheme is one of its enum). */
export const payeeVerificationIdLengthMax = 100;
/** Attempts when concurrent changes keep moving the status between our read and our guarded update. */
export const statusChangeAttemptsMax = 3;
/** A provider call that has not answered by then counts as failed. */
export const providerCallTimeoutMs = 30_000;
/** How long a started operation belongs to the request that started it; longer than the call and the transaction. */
export const providerOperationLeaseMs = 5 * 60_000;
/** Undo attempts by the reaper before the operation is left `failed` for an operator (logged). */
export const providerUndoAttemptsMax = 8;
/** Wait before the reaper's first try, then doubled after each failed one (with jitter), capped: 5 s … 10 min. */
export const providerUndoBackoffBaseMs = 5_000;
export const providerUndoBackoffMaxMs = 10 * 60_000;
/** Finished operations (done, undone, failed) are deleted this long after they finished. */
export const providerOperationRetentionMs = 30 * 24 * 60 * 60_000;
/** Abandoned provider operations undone per pass of the reaper. */
export const providerOperationReaperBatchSize = 20;
/** A provider's error message is kept with its operation, cut to this length. */
export const providerErrorTextLengthMax = 500;
/** Magic file names (docs/documents.md): "sync-fail" always fails, "sync-flaky" fails the first two attempts. */
export const sandboxKycFlakyAttempts = 2;
/** Sandbox OTC prices swing around their reference over a cycle of ten minutes (providers/sandbox/otc.ts). */
export const sandboxOtcPriceCycleMs = 600_000;
/** Attempts of a transaction before a transient failure is passed on. */
export const transactionAttemptsMax = 5;
/** PostgreSQL: waits between attempts, doubled each time, with jitter, so contenders spread out. */
export const transactionRetryBaseMs = 2;
/** SQLite: busy_timeout, one of the pragmas the embedded database must run with, checked after they are set (docs/architecture.md, Stack). */
export const sqliteBusyTimeoutMs = 5000;
/**
 * SQLite: the page cache of each of the two connections, in KiB — SQLite's own default. The driver's build raises it
 * to 16 MB, and the two caches then filled to 32 MB of the server's memory under load, while the operating system's
 * file cache serves the same pages (docs/operations.md "Memory").
 */
export const sqlitePageCacheKib = 2000;
/** SQLite: prepared statements kept per connection. */
export const preparedStatementCacheSize = 500;
/**
 * Under load a request may queue for a pooled connection longer than a fresh connect takes; pg applies one timeout
 * to both, so the pool's is longer than the start-up check's.
 */
export const postgresPoolWaitTimeoutMs = 30_000;
/** How deep wrapped causes are followed (GroupAbandonedError, AggregateError of a dual-stack connect). */
export const storageFaultCauseDepthMax = 4;
/** AES-256-GCM of the secret box (storage/secret-box.ts): a 256-bit key, the 96-bit nonce GCM is made for, a full 128-bit tag. */
export const secretBoxKeyBytes = 32;
export const secretBoxIvBytes = 12;
export const secretBoxTagBytes = 16;
/**
 * A group is committed before it takes more transactions than this, so a stream of writers cannot hold the write
 * lock (and the first writer's answer) for long, nor keep another process sharing the file waiting.
 */
export const sqliteGroupTransactionsMax = 64;
/** The cookie that binds the signed-out forms' CSRF tokens to a browser lives this long. */
export const dashboardFormCookieMaxAgeSeconds = 60 * 60;
/** The most a valid upload form can take: the route's declared limit, which also puts it behind the upload gate. */
export const documentFormBytesMax = documentSizeMaxBytes + 64 * 1024;
/** Sandbox settlements (payments, wallet transfers, OTC steps) claimed per pass of a settlement worker. */
export const settlementBatchSize = 100;
/** A presented dashboard session id or sign-in link token longer than this is unknown without being hashed. */
export const dashboardTokenLengthMax = 100;
/** A dashboard form token: HMAC-SHA256 in hex (web/form-tokens.ts). */
export const formTokenLength = 64;
/** The hosted onboarding page's upload form (multipart): bytes of a text field and of a field name. */
export const onboardingFormFieldBytesMax = 256;
export const onboardingFormFieldNameBytesMax = 64;
/** Random bytes of the reference code an end user is given (`EU-` and 10 hex digits). */
export const endUserReferenceRandomBytes = 5;
/** A business person's ownership is a percentage, and so is all of them together: at most 100. */
export const ownershipPercentMax = 100;
/** ISO 3166-1 alpha-2: a country code is two letters. */
export const countryCodeLength = 2;
/** docs/spec.md §4: an asset or currency code (GET /otc-exchanges/wallets, the live balance, an OTC quote's destinationCurrency) is 1-10 characters. */
export const assetCodeLengthMax = 10;
/** docs/spec.md §4 POST /otc-exchanges/quotes: sourceAmountEur is at most 20 characters. */
export const otcSourceAmountLengthMax = 20;
/** A confirmation's travelRulePayload is nested at most this deep. */
export const travelRulePayloadDepthMax = 10;
/** A deposit's counterpartyName: ISO 20022 `Nm` is Max140Text. */
export const counterpartyNameLengthMax = 140;
/** GET /events: an event type filter is at most this long (the longest type is far shorter). */
export const eventTypeLengthMax = 64;
/** Timestamps are stored with four-digit years (docs/decisions/0001): the last year one can hold. */
export const timestampYearMax = 9999;
/** BIP-141 witness programs: version 0 is 20 or 32 bytes; versions 1-16 are 2-40 bytes. */
export const segwitVersionMax = 16;
export const segwitVersion0ProgramBytes: readonly number[] = [20, 32];
export const witnessProgramBytesMin = 2;
export const witnessProgramBytesMax = 40;
/** A legacy Bitcoin address decodes to a version byte and a 20-byte hash. */
export const base58CheckAddressBytes = 21;
/** GET /events/stream (docs/webhooks.md "Event stream"): open streams per customer; one more is refused 429. */
export const eventStreamsPerCustomerMax = 5;
/** GET /events/stream: a comment line this often keeps proxies and the client's read timeout from closing a quiet stream. */
export const eventStreamHeartbeatMs = 15_000;
/** GET /events/stream: how often a stream looks for events another instance wrote (this instance's commits wake it at once). */
export const eventStreamPollIntervalMs = 250;
/** GET /events/stream: events read per query. */
export const eventStreamBatchSize = 100;
/**
 * GET /events/stream on PostgreSQL: an event's sequence is taken at insert, not at commit, so one whose transaction
 * commits late can appear behind the cursor. A stream reads again this far behind it (events it sent are skipped):
 * a transaction that writes events and commits within this time is never missed.
 */
export const eventStreamLateCommitGraceMs = 10_000;
/** GET /events/stream: a cursor (`Last-Event-ID`, `after`) is a decimal sequence of at most this many digits. */
export const eventStreamCursorLengthMax = 19;
/** `customer-api listen`: how long the local receiver has to answer a forwarded event. */
export const listenForwardTimeoutMs = 10_000;
/** `customer-api listen`: after a dropped stream it reconnects, waiting from this long, doubling up to the maximum. */
export const listenReconnectBaseMs = 500;
export const listenReconnectMaxMs = 10_000;
/** `customer-api listen` and `trigger`: how long one API call may take. */
export const cliApiTimeoutMs = 30_000;

/** Sandbox test clocks (docs/test-clocks.md). A clock's name, at most. */
export const testClockNameLengthMax = 100;
/** How far one advance may move a test clock: 60 days, room for every retry schedule and settle delay at once. */
export const testClockAdvanceMaxMs = 60 * 24 * 60 * 60 * 1000;
/**
 * How long an instance remembers whether a customer has a test clock attached: the hot paths (every sandbox payment)
 * skip the lookup; another instance sees a new or deleted clock within this time.
 */
export const testClockAttachmentCacheMs = 5_000;
export const testClockAttachmentCacheEntriesMax = 10_000;
/** An advance fires due timers a batch (settlementBatchSize) at a time, at most this many batches per kind. */
export const testClockAdvanceBatchesMax = 20;
/**
 * How long an advance holds its clock while its work runs, at most (server time): the clock's next advance waits for
 * it (422), and one whose instance stopped mid-work frees the clock after this. Well above what the work takes at
 * most: testClockAdvanceBatchesMax rounds of webhook attempts, each within its timeout.
 */
export const testClockAdvanceHoldMs = 10 * 60 * 1000;
