import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Clock, CustomerClocks } from '../clock.js';
import type { Config } from '../config/config.js';
import type { Providers } from '../providers/providers.js';
import type { ProviderEventInbox } from '../providers/inbox.js';
import type { Provisioning } from '../providers/provisioning.js';
import type { ReadCaches } from '../storage/cache.js';
import type { Storage } from '../storage/database.js';
import type { FileStore } from '../storage/files.js';
import type { ServerSecrets } from '../storage/server-secrets.js';
import type { PollingWorker } from '../workers/polling-worker.js';
import type { Reaper } from '../workers/reaper.js';
import type { EndUserService } from './end-users/index.js';

/** What a resource module may use when it registers its routes and workers. */
export interface ModuleContext {
  readonly config: Config;
  readonly storage: Storage;
  readonly providers: Providers;
  /** Creates objects at the provider undoably (providers/provisioning.ts). */
  readonly provisioning: Provisioning;
  /** Where provider outcomes arrive; a module with an asynchronous resource registers its lifecycle here. */
  readonly providerEvents: ProviderEventInbox;
  readonly clock: Clock;
  /** Each customer's time for the rules that follow sandbox test clocks (docs/test-clocks.md); the server clock otherwise. */
  readonly customerClocks: CustomerClocks;
  /** The app's read caches, kept by `clock` (storage/cache.ts). */
  readonly caches: ReadCaches;
  readonly files: FileStore;
  /** Resolves the caller's end users (404 for anyone else's). */
  readonly endUsers: EndUserService;
  /** Background loops; add yours here and server.ts starts them. */
  readonly workers: PollingWorker[];
  /** Rows that expire: add how yours are deleted here, and the one reaper worker deletes them a batch at a time. */
  readonly reaper: Reaper;
  readonly log: FastifyBaseLogger;
  /** Where a module registers its Prometheus series; the metrics listener serves them (docs/operations.md "Metrics"). */
  readonly metrics: Registry;
  /** The deployment's secrets, wrapped with the master key (storage/server-secrets.ts). */
  readonly serverSecrets: ServerSecrets;
}
