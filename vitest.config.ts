import { defineConfig } from 'vitest/config';

/**
 * Every test runs on SQLite. When TEST_DATABASE_URL is set (CI sets it), the API and storage tests run a
 * second time on PostgreSQL as the project "postgres", and so do the dashboard tests (test/web).
 */
const postgresUrl = process.env.TEST_DATABASE_URL;

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true as const, test: { name: 'sqlite', include: ['test/**/*.test.ts'], env: { TEST_DB: 'sqlite' } } },
      ...(postgresUrl
        ? [{ extends: true as const, test: { name: 'postgres', include: ['test/api/**/*.test.ts', 'test/storage/**/*.test.ts', 'test/web/**/*.test.ts'], env: { TEST_DB: 'postgres' } } }]
        : []),
    ],
  },
});
