import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Storage } from '../../src/storage/database.js';
import { freshStorage } from './test-app.js';

/**
 * A fresh, empty database (freshStorage) for the tests of the describe block this is called in: made before them,
 * or before each one with `each`, handed to `use`, then closed and dropped after them. Set-up that needs the
 * database (migrations, rows) goes in a hook registered after this call, which runs after it.
 */
export function useFreshStorage(use: (storage: Storage) => void, options: { each?: boolean } = {}): void {
  let fresh: Awaited<ReturnType<typeof freshStorage>> | undefined;
  (options.each ? beforeEach : beforeAll)(async () => {
    fresh = await freshStorage();
    use(fresh.storage);
  });
  (options.each ? afterEach : afterAll)(async () => {
    await fresh?.storage.close();
    await fresh?.drop();
    fresh = undefined;
  });
}
