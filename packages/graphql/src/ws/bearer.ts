/**
 * A bearer token in the `connection_init` payload. Browsers cannot set headers on a WebSocket
 * upgrade, so graphql-ws clients send the credentials in `connectionParams`, conventionally
 * `{ authorization: "Bearer <token>" }`; this reads them as RFC 6750 §2.1 reads the
 * Authorization header field, and verifies the token with a verifier of @api-blocks/bearer.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { Principal } from '@api-blocks/core'
import { ApiBlocksError } from '@api-blocks/core'

/** The longest `Bearer <token>` value read, as @api-blocks/bearer limits the header field. */
const MAX_CREDENTIALS = 4096

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token; b64token = 1*( ALPHA / DIGIT / "-" /
// "." / "_" / "~" / "+" / "/" ) *"="; the scheme is case-insensitive (RFC 9110 §11.1).
const CREDENTIALS = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i

/**
 * Options of {@link bearerAuthentication}.
 *
 * @example
 * ```ts
 * const options: BearerAuthenticationOptions = { param: 'Authorization' }
 * ```
 */
export interface BearerAuthenticationOptions {
  /**
   * The member of the `connection_init` payload holding `Bearer <token>` (default
   * `authorization`), matched without regard to case.
   */
  readonly param?: string
}

/**
 * An `authenticate` for `attachGraphQLWebSocket` that verifies the bearer token of the
 * `connection_init` payload with `verifier` (`createTokenVerifier` of @api-blocks/bearer, or
 * anything with its `verify`). A missing, malformed (over 4 KiB included) or refused token
 * (an `ApiBlocksError` with a 4xx status: invalid, expired) gives `undefined`, so the socket
 * closes with 4403; a verifier that cannot answer (503: the JWKS or the introspection endpoint
 * is down) rejects, so the socket closes with 4500 and `onError` is told.
 *
 * @example
 * ```ts
 * import { createTokenVerifier } from '@api-blocks/bearer'
 * import { attachGraphQLWebSocket, bearerAuthentication } from '@api-blocks/graphql/ws'
 *
 * const verifier = createTokenVerifier({ jwt: { issuer, audience, jwksUrl } })
 * attachGraphQLWebSocket(server, { schema, authenticate: bearerAuthentication(verifier) })
 * // client: createClient({ url, connectionParams: { authorization: `Bearer ${token}` } })
 * ```
 */
export function bearerAuthentication(
  verifier: { verify(token: string): Promise<Principal> },
  options?: BearerAuthenticationOptions,
): (
  connectionParams: Readonly<Record<string, unknown>> | undefined,
  request: IncomingMessage,
) => Promise<Principal | undefined> {
  const param = (options?.param ?? 'authorization').toLowerCase()
  return async (connectionParams) => {
    if (connectionParams === undefined) return undefined
    let value: unknown
    for (const key of Object.keys(connectionParams)) {
      if (key.toLowerCase() === param) {
        value = connectionParams[key]
        break
      }
    }
    if (typeof value !== 'string' || value.length > MAX_CREDENTIALS) return undefined
    const token = CREDENTIALS.exec(value)?.[1]
    if (token === undefined) return undefined
    try {
      return await verifier.verify(token)
    } catch (error) {
      if (error instanceof ApiBlocksError && error.status < 500) return undefined
      throw error
    }
  }
}
