import net from 'node:net';
import type { FieldError } from '../../errors.js';
import { isPublicAddress } from './address-guard.js';

/**
 * The checks a receiver URL passes when a subscription is created or changed (docs/webhooks.md "Receiver URLs").
 * Delivery checks again, on the addresses actually dialled (address-guard.ts): a name is only resolved then.
 */
export function receiverUrlProblems(raw: string, allowPrivate: boolean, path = '/url'): FieldError[] {
  const problem = (reason: string): FieldError[] => [{ location: 'body', path, reason }];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return problem('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return problem(allowPrivate ? 'must be an http or https URL' : 'must be an https URL');
  }
  // Credentials in the URL would be stored and shown in clear; receivers authenticate deliveries by signature.
  if (url.username !== '' || url.password !== '') return problem('must not contain a user name or password');
  if (raw.trim() !== raw || /[^\P{Cc}\u0080-\u009F]/u.test(raw)) return problem('must not contain spaces or control characters at its ends');
  if (allowPrivate) return [];
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(host) !== 0 && !isPublicAddress(host)) return problem(`must not point to a loopback, private or otherwise non-public address (${host})`);
  if (host === 'localhost' || host.endsWith('.localhost')) return problem('must not point to localhost');
  return [];
}
