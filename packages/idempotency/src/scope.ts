/**
 * Whose key it is: the default scope of the middleware. A key is looked up within its scope
 * only (draft-ietf-httpapi-idempotency-key-header §5: a low-entropy key must not let one client
 * fetch another's stored response), so the scope must tell callers apart:
 *
 * 1. the authenticated principal (`principalOf` of `@api-blocks/core`, as `principalKey`
 *    writes it: `sub:<subject>` or `client:<client id>`), the one identity every block keys on;
 * 2. else the client's address as the adapter recorded it (`clientAddressOf`): `ip:<address>`;
 * 3. else nothing can tell this caller from any other. Sharing one scope among every such
 *    request would let any anonymous client replay another's response, so the request is
 *    refused as a server misconfiguration (`IDEMPOTENCY_SCOPE_UNKNOWN`, 500): authenticate
 *    first, serve through an adapter that records the address, or pass a `scope` option.
 *
 * @module
 */
import { clientAddressOf, principalKey, principalOf } from '@api-blocks/core'
import { IdempotencyError } from './error.ts'

/**
 * @internal The default scope of a request (see the module documentation).
 *
 * @throws {IdempotencyError} `IDEMPOTENCY_SCOPE_UNKNOWN` (500) when there is neither a
 *   principal with a subject or client id nor a client address.
 */
export function defaultScope(request: Request): string {
  const principal = principalOf(request)
  const key = principal === undefined ? undefined : principalKey(principal)
  if (key !== undefined) return key
  const address = clientAddressOf(request)
  if (address !== undefined && address !== '') return `ip:${address}`
  throw new IdempotencyError(
    'IDEMPOTENCY_SCOPE_UNKNOWN',
    'idempotency(): a request with an Idempotency-Key has no principal and no client address, so its key cannot be scoped to its caller. Authenticate before this middleware (setPrincipal), serve it through an adapter that records the client address, or pass a `scope` option.',
  )
}
