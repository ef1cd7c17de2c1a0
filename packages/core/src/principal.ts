/**
 * Who a request acts for. Whatever authenticates a request (a bearer-token verifier, an API-key
 * check, a session) records one {@link Principal} on it; every block that keys on identity (rate
 * limits, idempotency scopes, GraphQL field authorisation, logs) reads it with
 * {@link principalOf}, so they all agree on who the caller is.
 *
 * @module
 */
import type { ContextKey } from './context.ts'
import { getContext, setContext, sharedContextKey } from './context.ts'

/**
 * The authenticated caller of a request: an end user acting through a client (an OAuth 2.0
 * access token with a subject), or a client acting for itself (client credentials).
 *
 * @example
 * ```ts
 * const principal: Principal = {
 *   subject: 'user-42',
 *   clientId: 'mobile-app',
 *   scopes: ['read:orders', 'write:orders'],
 *   claims: { email: 'ada@example.com' },
 * }
 * ```
 */
export interface Principal {
  /**
   * The resource owner the credentials speak for (the JWT `sub` claim, RFC 7519 §4.1.2), or
   * `undefined` for a client acting on its own behalf.
   */
  readonly subject?: string | undefined
  /** The OAuth 2.0 client the credentials were issued to (RFC 9068 §2.2 `client_id`). */
  readonly clientId?: string | undefined
  /** The scopes granted (RFC 6749 §3.3), one string each. */
  readonly scopes: readonly string[]
  /** Every other claim of the credentials, as verified. */
  readonly claims: Readonly<Record<string, unknown>>
  /** The credential's own identifier (the JWT `jti`, RFC 7519 §4.1.7), when it has one. */
  readonly tokenId?: string | undefined
  /**
   * The key the credentials are bound to (RFC 7800 `cnf`): `jkt` for DPoP (RFC 9449 §6.1),
   * `x5t#S256` for mutual TLS (RFC 8705 §3.1). `undefined` for a bearer token.
   */
  readonly confirmation?: Readonly<Record<string, string>> | undefined
}

const PRINCIPAL: ContextKey<Principal> = sharedContextKey('core.principal')

/**
 * The principal recorded for `request`, or `undefined` when nothing authenticated it.
 *
 * @example
 * ```ts
 * const caller = principalOf(request)?.subject ?? 'anonymous'
 * ```
 */
export function principalOf(request: Request): Principal | undefined {
  return getContext(request, PRINCIPAL)
}

/**
 * Records the authenticated principal of `request`: what an authentication layer calls once
 * it has verified the credentials, before the blocks that key on identity run.
 *
 * @example
 * ```ts
 * setPrincipal(request, { subject: 'user-42', scopes: ['read:orders'], claims: {} })
 * ```
 */
export function setPrincipal(request: Request, principal: Principal): void {
  setContext(request, PRINCIPAL, principal)
}

/**
 * A stable text identifying a principal, for keys that must tell callers apart (rate-limit
 * buckets, idempotency scopes): `sub:<subject>;client:<client id>` for a user acting through a
 * client, so each application a user signs in to keys apart (one cannot spend another's quota
 * or replay another's stored responses); `sub:<subject>` for a user with no client;
 * `client:<client id>` for a client acting for itself. Every part is URI-encoded, so no two
 * principals share a key. `undefined` for a principal with neither, which names nobody: key
 * such a request as an unauthenticated one.
 *
 * @example
 * ```ts
 * principalKey({ subject: 'user-42', clientId: 'spa', scopes: [], claims: {} }) // 'sub:user-42;client:spa'
 * principalKey({ subject: 'user-42', scopes: [], claims: {} }) // 'sub:user-42'
 * principalKey({ clientId: 'billing', scopes: [], claims: {} }) // 'client:billing'
 * principalKey({ scopes: [], claims: {} }) // undefined
 * ```
 */
export function principalKey(principal: Principal): string | undefined {
  const { subject, clientId } = principal
  if (subject !== undefined) {
    const user = `sub:${encodeURIComponent(subject)}`
    return clientId === undefined ? user : `${user};client:${encodeURIComponent(clientId)}`
  }
  if (clientId !== undefined) return `client:${encodeURIComponent(clientId)}`
  return undefined
}
