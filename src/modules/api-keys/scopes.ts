import { DomainError } from '../../errors.js';

/** docs/architecture.md, Keys and scopes: `*`, or `<resource>:read` / `<resource>:write` for each resource. */
export const scopeResources = [
  'fiat-accounts',
  'virtual-accounts',
  'payees',
  'end-users',
  'documents',
  'payments',
  'fees',
  'transactions',
  'wallets',
  'otc-exchanges',
  'webhooks',
] as const;

type ScopeResource = (typeof scopeResources)[number];
export type Scope = '*' | `${ScopeResource}:${'read' | 'write'}`;

const allScopes: readonly Scope[] = ['*', ...scopeResources.flatMap((resource) => [`${resource}:read`, `${resource}:write`] as Scope[])];

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}

/** A key holds a scope when it has `*`, the scope itself, or — for a read — the write scope of the same resource. */
export function grants(held: readonly Scope[], required: Scope): boolean {
  if (held.includes('*') || held.includes(required)) return true;
  return required.endsWith(':read') && held.includes(required.replace(/:read$/, ':write') as Scope);
}

/** 403 INSUFFICIENT_SCOPE unless the key holds one of the scopes. */
export function requireScope(held: readonly Scope[], anyOf: Scope | readonly Scope[]): void {
  const candidates: readonly Scope[] = typeof anyOf === 'string' ? [anyOf] : anyOf;
  if (candidates.some((scope) => grants(held, scope))) return;
  const named = candidates.join(' or ');
  throw new DomainError('INSUFFICIENT_SCOPE', `This API key lacks the scope ${named}.`, { required_scope: named });
}
