import type { Dialect } from './database.js';
import { storageFaultCauseDepthMax } from '../config/limits.js';

/**
 * The one place that tells a fault of the storage underneath the server — the database away, the disk full or
 * unwritable — from a bug. A fault is answered 503 or 507 with Retry-After (docs/errors.md), readiness reports it,
 * and workers back off; anything else stays a bug (500 INTERNAL_ERROR). docs/operations.md "Faults" lists them.
 *
 * - `unavailable`: the database cannot be reached or is busy (PostgreSQL restarting, a terminated backend, a dropped
 *   or refused connection, a pool that cannot connect; SQLite locked by another process past its busy timeout).
 * - `unwritable`: the data cannot be written (SQLite read-only or failing with an I/O error, a read-only data
 *   directory for uploaded files).
 * - `full`: no space left for the data (SQLite "database or disk is full", ENOSPC, a disk quota).
 */
export type StorageFault = 'unavailable' | 'unwritable' | 'full';

/**
 * SQLSTATE codes that mean the connection, not the statement, failed: the connection exceptions of class 08 but its
 * protocol violation (08P01, which a statement can cause), 57P01-03 (admin shutdown, crash shutdown, cannot connect
 * now: a restart or pg_terminate_backend), 53300 (too many connections). 53100 is PostgreSQL's disk full. Everything
 * else, a wrong password or a missing database included, is no passing fault.
 */
const postgresFaultCodes: Record<string, StorageFault> = {
  '08000': 'unavailable',
  '08003': 'unavailable',
  '08006': 'unavailable',
  '08001': 'unavailable',
  '08004': 'unavailable',
  '57P01': 'unavailable',
  '57P02': 'unavailable',
  '57P03': 'unavailable',
  '53300': 'unavailable',
  '53100': 'full',
};

/** Node's socket errors on the database connection. */
const networkErrorCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * pg's own errors carry no code: a connection that ended or could not be made in time ("timeout expired" from a
 * client, "Connection terminated due to connection timeout" from the pool), a client already broken by such an
 * error, and pg-pool's wait for a connection that timed out.
 */
const postgresConnectionMessages = [
  'Connection terminated',
  'timeout expired',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

const sqliteFaults: Array<[prefix: string, fault: StorageFault]> = [
  ['SQLITE_FULL', 'full'],
  ['SQLITE_BUSY', 'unavailable'],
  ['SQLITE_LOCKED', 'unavailable'],
  ['SQLITE_READONLY', 'unwritable'],
  ['SQLITE_IOERR', 'unwritable'],
  ['SQLITE_CANTOPEN', 'unwritable'],
];

/** Errors of the file system (an uploaded document's file): those that carry a path. */
const fileSystemFaults: Record<string, StorageFault> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  EROFS: 'unwritable',
  EACCES: 'unwritable',
  EPERM: 'unwritable',
  EIO: 'unwritable',
};

function ownFault(error: unknown, dialect: Dialect): StorageFault | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message, path } = error as { code?: unknown; message?: unknown; path?: unknown };
  if (typeof code === 'string') {
    if (dialect === 'sqlite') {
      const sqlite = sqliteFaults.find(([prefix]) => code.startsWith(prefix));
      if (sqlite) return sqlite[1];
    }
    if (dialect === 'postgres') {
      if (Object.hasOwn(postgresFaultCodes, code)) return postgresFaultCodes[code];
      if (networkErrorCodes.has(code)) return 'unavailable';
    }
    if (typeof path === 'string' && code in fileSystemFaults) return fileSystemFaults[code];
  }
  if (dialect === 'postgres' && typeof message === 'string' && postgresConnectionMessages.some((text) => message.startsWith(text))) return 'unavailable';
  return undefined;
}

/** The storage fault behind `error` (itself, or a cause it wraps), or undefined for anything else. */
export function storageFaultOf(error: unknown, dialect: Dialect, depth = 0): StorageFault | undefined {
  const fault = ownFault(error, dialect);
  if (fault !== undefined || depth >= storageFaultCauseDepthMax || typeof error !== 'object' || error === null) return fault;
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  if (cause !== undefined) {
    const wrapped = storageFaultOf(cause, dialect, depth + 1);
    if (wrapped !== undefined) return wrapped;
  }
  if (Array.isArray(errors)) {
    for (const each of errors) {
      const wrapped = storageFaultOf(each, dialect, depth + 1);
      if (wrapped !== undefined) return wrapped;
    }
  }
  return undefined;
}
