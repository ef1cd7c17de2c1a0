/**
 * Token introspection (RFC 7662): what a resource server asks about a token, over HTTP with
 * client authentication, or in process ({@link introspectToken}).
 *
 * Only access tokens are active here: a resource server that introspects a refresh token must
 * not take it for an access token, so a refresh token answers `{"active":false}` like any
 * token that is unknown, expired, revoked or malformed (RFC 7662 §2.2: exactly that, nothing
 * more).
 *
 * @module
 */
import { authenticateClient } from './client-auth.ts'
import type { ServerContext } from './context.ts'
import { OAuthError } from './error.ts'
import { parameter, readForm } from './form.ts'
import { tokenScopes } from './issue.ts'
import { LIMITS } from './limits.ts'
import { findActiveToken } from './lookup.ts'
import { noStoreJson, oauthErrorResponse } from './responses.ts'
import { methodNotAllowed } from './token-endpoint.ts'

/**
 * What introspection says of a token (RFC 7662 §2.2): `{ active: false }` exactly, or every
 * field of an active access token.
 *
 * @example
 * ```ts
 * const result: IntrospectionResult = await server.introspectToken(token)
 * if (result.active) console.log(result.sub, result.scope)
 * ```
 */
export type IntrospectionResult =
  | { readonly active: false }
  | {
      readonly active: true
      readonly scope: string
      readonly client_id: string
      /** The end user's name (findAccount's `username`, else the subject); absent without a user. */
      readonly username?: string
      /** The end user, or the client id for client credentials (RFC 9068 §2.2). */
      readonly sub: string
      readonly aud: string
      readonly iss: string
      readonly exp: number
      readonly iat: number
      readonly token_type: 'Bearer'
      readonly jti: string
      readonly auth_time?: number
      /** The key the token is bound to (RFC 7800), for DPoP and mutual TLS. */
      readonly cnf?: Readonly<Record<string, string>>
    }

const INACTIVE: IntrospectionResult = Object.freeze({ active: false })

/**
 * Introspects `token` in process: what `POST /oauth/introspect` answers, without a client
 * (the host is the resource server, so it learns of every token). Rejects with an
 * {@link OAuthError} `server_error` (code `SERVER_ERROR`) when the store or `findAccount`
 * fails, after telling `onEvent`.
 *
 * @example
 * ```ts
 * const result = await introspectToken(context, token)
 * if (result.active) console.log(result.scope)
 * ```
 */
export async function introspectToken(
  context: ServerContext,
  token: string,
): Promise<IntrospectionResult> {
  try {
    return await lookUp(context, token)
  } catch (error) {
    // The store or findAccount failed: the caller gets an OAuthError it can map (a resource
    // server answers 503), and the observer what was thrown.
    context.options.onEvent({ type: 'server_error', code: 'SERVER_ERROR', error })
    throw new OAuthError('server_error', 'The token could not be introspected.', { cause: error })
  }
}

async function lookUp(context: ServerContext, token: string): Promise<IntrospectionResult> {
  const { clock, issuer, findAccount } = context.options
  const found = await findActiveToken(context, token, clock())
  if (found === undefined || found.active.token.kind !== 'access_token') return INACTIVE
  const { token: record, family } = found.active
  let username: string | undefined
  if (family.subject !== undefined) {
    const account = findAccount === undefined ? undefined : await findAccount(family.subject)
    username = account?.username ?? family.subject
  }
  const result: Record<string, unknown> = {
    active: true,
    scope: tokenScopes(record, family).join(' '),
    client_id: family.clientId,
  }
  if (username !== undefined) result['username'] = username
  Object.assign(result, {
    sub: family.subject ?? family.clientId,
    aud: family.resource,
    iss: issuer,
    exp: Math.floor(record.expiresAt / 1000),
    iat: Math.floor(record.issuedAt / 1000),
    token_type: 'Bearer',
    jti: record.jti,
  })
  if (family.authTime !== undefined) result['auth_time'] = family.authTime
  if (record.confirmation !== undefined) result['cnf'] = { ...record.confirmation }
  return result as IntrospectionResult
}

/**
 * `POST /oauth/introspect`: the caller authenticates as a confidential client (RFC 7662 §2.1),
 * and learns only of tokens that concern it (RFC 7662 §4: the server decides what a caller may
 * see): its own tokens, or tokens whose audience is one of the resources it serves
 * (`ClientConfig.resources`). Any other token is exactly `{"active":false}`.
 *
 * @example
 * ```ts
 * const response = await handleIntrospect(context, request) // 200 {"active":false} or the fields
 * ```
 */
export async function handleIntrospect(
  context: ServerContext,
  request: Request,
): Promise<Response> {
  if (request.method !== 'POST') return methodNotAllowed('POST')
  const { issuer, clients, maxFormBytes, onEvent } = context.options
  try {
    const form = await readForm(request, maxFormBytes)
    const { client } = await authenticateClient(request, form, clients, {
      allowPublic: false,
      onFailure: (clientId) =>
        onEvent({ type: 'client_authentication_failed', code: 'INVALID_CLIENT', clientId }),
    })
    const token = parameter(form, 'token', Number.POSITIVE_INFINITY)
    if (token === undefined)
      throw new OAuthError('invalid_request', 'The token parameter is missing.')
    // RFC 7662 §2.1: token_type_hint is a hint; an unknown one is ignored. A token over the
    // limit is no token this server issued.
    parameter(form, 'token_type_hint', LIMITS.shortParameter)
    const result = await introspectToken(context, token)
    if (
      result.active &&
      result.client_id !== client.id &&
      !(client.resources ?? []).includes(result.aud)
    ) {
      return noStoreJson(INACTIVE)
    }
    return noStoreJson(result)
  } catch (error) {
    return oauthErrorResponse(error, issuer, onEvent)
  }
}
