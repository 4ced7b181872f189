import { defineConfig } from 'vitest/config';
import { PrivatePostgres } from './scripts/private-postgres.mjs';

/**
 * Every test runs on SQLite. The API, storage and dashboard tests (test/web) run a second time on PostgreSQL as the
 * project "postgres": on the server of TEST_DATABASE_URL when it is set (CI sets it), else on a throwaway cluster
 * started for the run when PostgreSQL's server binaries are installed (test/helpers/local-postgres.ts). Without
 * either, they are skipped, and the run says so.
 */
const postgresUrl = process.env.TEST_DATABASE_URL;
const throwawayPostgresUnavailable = postgresUrl ? undefined : PrivatePostgres.unavailable();
if (throwawayPostgresUnavailable) {
  console.warn(`\n!!! PostgreSQL tests SKIPPED: TEST_DATABASE_URL is not set and ${throwawayPostgresUnavailable} !!!\n`);
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true as const, test: { name: 'sqlite', include: ['test/**/*.test.ts'], env: { TEST_DB: 'sqlite' } } },
      ...(throwawayPostgresUnavailable
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: ['test/api/**/*.test.ts', 'test/storage/**/*.test.ts', 'test/web/**/*.test.ts'],
                env: { TEST_DB: 'postgres' },
                // Runs only when this project has tests to run, before any test process starts; a no-op with TEST_DATABASE_URL.
                globalSetup: ['test/helpers/local-postgres.ts'],
              },
            },
          ]),
    ],
  },
});
