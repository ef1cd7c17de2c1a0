/**
 * The resource-server middleware: `bearer()` authenticates a request by its access token and
 * records its `Principal`; `requireScopes()` lets it through only with the scopes a route needs.
 *
 * @module
 */
import type { ContextKey, Handler, Middleware } from '@api-blocks/core'
import { contextKey, getContext, principalOf, setContext, setPrincipal } from '@api-blocks/core'
import { hasQueryAccessToken, parseBearerAuthorization } from './authorization.ts'
import { checkRealm, isScopeToken } from './challenge.ts'
import { BearerError } from './error.ts'
import type { BearerOptions } from './options.ts'
import { bearerErrorResponse, DEFAULT_REALM } from './response.ts'
import { createTokenVerifier } from './verifier.ts'

interface Answering {
  readonly realm: string
  readonly problemBase: string | undefined
}

// How `bearer()` answers, for the `requireScopes()` behind it (a private key of this package).
const ANSWERING: ContextKey<Answering> = contextKey('bearer.answering')
const DEFAULTS: Answering = { realm: DEFAULT_REALM, problemBase: undefined }

function refuse(error: BearerError, request: Request, answering: Answering): Response {
  return bearerErrorResponse(error, {
    request,
    realm: answering.realm,
    ...(answering.problemBase === undefined ? {} : { problemBase: answering.problemBase }),
  })
}

/**
 * Authenticates every request by the bearer token of its `Authorization` field (RFC 6750
 * §2.1; never the URI query or a form body), verifies it (see `createTokenVerifier`), records
 * the resulting `Principal` with core's `setPrincipal` for the blocks that key on identity
 * (rate limits, idempotency), and calls `next`. Otherwise it answers, as problem+json with a
 * `WWW-Authenticate: Bearer` challenge (RFC 6750 §3):
 * - 401 without an `error` when the request has no token (or credentials of another scheme);
 * - 400 `invalid_request` for a malformed field, several credentials, a token over 4 KiB, or
 *   an `access_token` in the URI query (refused even beside a good field, so it is noticed);
 * - 401 `invalid_token` for a token that is not valid, expired, revoked or not for this API;
 * - 503 with `Retry-After` (no challenge) when the JWKS or the introspection endpoint fails.
 *
 * The configuration is checked at once (see `createTokenVerifier`).
 *
 * @example
 * ```ts
 * import { bearer, requireScopes } from '@api-blocks/bearer'
 *
 * const authenticate = bearer({
 *   realm: 'orders',
 *   jwt: {
 *     issuer: 'https://auth.example.com',
 *     audience: 'https://api.example.com',
 *     jwksUrl: 'https://auth.example.com/.well-known/jwks.json',
 *   },
 * })
 * const readOrders = requireScopes('read:orders')
 * const handler = (request: Request) =>
 *   authenticate(request, (request) => readOrders(request, listOrders))
 * ```
 */
export function bearer(options: BearerOptions): Middleware {
  const answering: Answering = {
    realm: checkRealm(options.realm ?? DEFAULT_REALM),
    problemBase: options.problemBase,
  }
  const verifier = createTokenVerifier(options)
  return async (request: Request, next: Handler): Promise<Response> => {
    setContext(request, ANSWERING, answering)
    // RFC 6750 §2.3: a token in the URI leaks into logs and Referer; refuse, never read it.
    if (hasQueryAccessToken(request.url)) {
      const error = new BearerError(
        'TOKEN_IN_QUERY',
        'Access tokens are not accepted in the URI query; send them in the Authorization header.',
      )
      return refuse(error, request, answering)
    }
    const found = parseBearerAuthorization(request.headers.get('authorization'))
    if (found.type === 'missing') {
      const error = new BearerError('TOKEN_MISSING', 'The request carries no bearer access token.')
      return refuse(error, request, answering)
    }
    if (found.type === 'malformed') {
      return refuse(new BearerError('TOKEN_MALFORMED', found.reason), request, answering)
    }
    try {
      setPrincipal(request, await verifier.verify(found.token))
    } catch (error) {
      if (error instanceof BearerError) return refuse(error, request, answering)
      throw error
    }
    return next(request)
  }
}

/**
 * Lets a request through only when its principal holds every one of `scopes`; otherwise 403
 * `insufficient_scope` with the scopes needed in the challenge's `scope` (RFC 6750 §3.1) and
 * the problem's `required_scopes`. A request without a principal (no `bearer()` in front)
 * answers 401. Each scope must be a scope token (RFC 6749 §3.3), checked at once.
 *
 * @example
 * ```ts
 * import { requireScopes } from '@api-blocks/bearer'
 *
 * const writeOrders = requireScopes('write:orders')
 * // behind bearer(): writeOrders(request, createOrder)
 * ```
 */
export function requireScopes(...scopes: string[]): Middleware {
  if (scopes.length === 0) throw new TypeError('requireScopes needs at least one scope')
  for (const scope of scopes) {
    if (typeof scope !== 'string' || !isScopeToken(scope)) {
      throw new TypeError(`Not a scope token (RFC 6749 §3.3): ${JSON.stringify(scope)}`)
    }
  }
  const required = Object.freeze([...new Set(scopes)])
  return async (request: Request, next: Handler): Promise<Response> => {
    const answering = getContext(request, ANSWERING) ?? DEFAULTS
    const principal = principalOf(request)
    if (principal === undefined) {
      const error = new BearerError('TOKEN_MISSING', 'The request carries no bearer access token.')
      return refuse(error, request, answering)
    }
    const missing = required.filter((scope) => !principal.scopes.includes(scope))
    if (missing.length > 0) {
      const error = new BearerError(
        'INSUFFICIENT_SCOPE',
        `The access token lacks the scope ${missing.join(' ')}.`,
        { requiredScopes: required },
      )
      return refuse(error, request, answering)
    }
    return next(request)
  }
}
