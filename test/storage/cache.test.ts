import { describe, expect, it } from 'vitest';
import { ExpiringCache } from '../../src/storage/cache.js';
import { TestClock } from '../helpers/clock.js';

/** The read caches' rules (docs/operations.md "Caches"); dialect-independent. */

describe('ExpiringCache', () => {
  it('serves a value until its time is up, then loads it again', async () => {
    const clock = new TestClock();
    const cache = new ExpiringCache<string, string>(clock, 2000, 10);
    let loads = 0;
    const load = async () => `value ${++loads}`;
    expect(await cache.getOrLoad('key', load)).toBe('value 1');
    clock.advance(1999);
    expect(await cache.getOrLoad('key', load)).toBe('value 1');
    clock.advance(1);
    expect(await cache.getOrLoad('key', load)).toBe('value 2');
  });

  it('does not remember a miss, and forgets its oldest entry past its size', async () => {
    const cache = new ExpiringCache<string, string>(new TestClock(), undefined, 2);
    expect(await cache.getOrLoad('absent', async () => undefined)).toBeUndefined();
    expect(await cache.getOrLoad('absent', async () => 'now present')).toBe('now present');
    cache.set('second', '2');
    cache.set('third', '3');
    expect(cache.get('absent')).toBeUndefined();
    expect([cache.get('second'), cache.get('third')]).toEqual(['2', '3']);
  });

  it('does not store a value read before a deletion that happened while it loaded (a key revoked meanwhile)', async () => {
    const cache = new ExpiringCache<string, string>(new TestClock(), 2000, 10);
    let finishLoad!: (value: string) => void;
    const loading = cache.getOrLoad('key', () => new Promise<string>((resolve) => (finishLoad = resolve)));
    cache.delete('key');
    finishLoad('read before the revocation');
    expect(await loading).toBe('read before the revocation');
    expect(cache.get('key')).toBeUndefined();
    // A load that begins after the deletion is stored as usual.
    expect(await cache.getOrLoad('key', async () => 'read after')).toBe('read after');
    expect(cache.get('key')).toBe('read after');

    const loadingMore = cache.getOrLoad('other', () => new Promise<string>((resolve) => (finishLoad = resolve)));
    cache.deleteWhere((key) => key === 'unrelated');
    finishLoad('read before a deleteWhere');
    await loadingMore;
    expect(cache.get('other')).toBeUndefined();
  });
});
