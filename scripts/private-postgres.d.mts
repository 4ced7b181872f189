// Types of private-postgres.mjs for the TypeScript that imports it (vitest.config.ts, test/helpers/local-postgres.ts).
export declare class PrivatePostgres {
  /** Why the cluster cannot run here (no binaries, no postgres user), or undefined. */
  static unavailable(): string | undefined;
  constructor(options: { role: string });
  /** The temp directory holding the data directory, the unix socket and server.log. */
  readonly dir: string;
  /** The loopback port, once started. */
  readonly port: number | undefined;
  start(): Promise<void>;
  /** A database owned by the role; its connection string. */
  createDatabase(name: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  restart(): Promise<void>;
  terminateBackends(database: string): Promise<number>;
  /** Stops the cluster at once and removes its directory. Safe to call twice. */
  destroy(): Promise<void>;
  /** SIGKILL to the postmaster named in its pid file. */
  killPostmaster(): void;
}
