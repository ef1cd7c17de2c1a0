/**
 * The authorization endpoint (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2): checks the request
 * strictly, hands a valid one to the host's login and consent pages as an interaction, and
 * answers errors the only safe way for each stage: an HTML page while the client or its
 * redirect URI is not trusted (RFC 6749 §4.1.2.1), a 303 back to the redirect URI with
 * `state` and `iss` (RFC 9207) after.
 *
 * @module
 */

import { newBinding } from './binding.ts'
import type { OAuthClient } from './clients.ts'
import type { ServerContext } from './context.ts'
import { OAuthError } from './error.ts'
import { type Parameters, parameter, parseUrlEncoded, readFormText } from './form.ts'
import { errorPage, serverErrorPage, unavailablePage } from './html.ts'
import { LIMITS } from './limits.ts'
import { openIdParameters } from './openid-parameters.ts'
import { isS256Challenge } from './pkce.ts'
import { parseScope, requireSubset } from './scope.ts'
import type { InteractionRecord } from './store.ts'
import { randomId } from './tokens.ts'

/**
 * A 303 to `redirectUri` with `parameters` added to its query and `iss` (RFC 9207 §2), so the
 * client can tell which server answered (mix-up defence, RFC 9700 §4.4). 303, not 302 or 307:
 * the user agent must GET the redirect URI whatever method brought it here (RFC 9700 §4.12).
 *
 * @example
 * ```ts
 * redirectWith('https://app.example/cb', issuer, { code, state }) // 303 to …/cb?code=…&state=…&iss=…
 * ```
 */
export function redirectWith(
  redirectUri: string,
  issuer: string,
  parameters: Record<string, string | undefined>,
): Response {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined) url.searchParams.append(name, value)
  }
  url.searchParams.append('iss', issuer)
  return new Response(null, {
    status: 303,
    headers: { location: url.href, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
  })
}

type Trusted = { client: OAuthClient; redirectUri: string }

/**
 * Whether `value` is VSCHAR only (%x20-7E, RFC 6749 Appendix A), the grammar of `state`
 * (Appendix A.5), which this server applies to `nonce` too: both are stored and echoed as
 * given, and a store may hold no control character (PostgreSQL text cannot hold U+0000).
 */
function isVschar(value: string): boolean {
  for (let index = 0; index < value.length; index++) {
    const char = value.charCodeAt(index)
    if (char < 0x20 || char > 0x7e) return false
  }
  return value.length > 0
}

/** Whether `value` holds a control character (C0 or DEL), which no stored text may. */
function hasControl(value: string): boolean {
  for (let index = 0; index < value.length; index++) {
    const char = value.charCodeAt(index)
    if (char < 0x20 || char === 0x7f) return true
  }
  return false
}

/**
 * The client and its redirect URI, or the page that says why they cannot be trusted. Only after
 * this may an error go back to the client.
 */
async function trust(context: ServerContext, query: Parameters): Promise<Trusted | Response> {
  for (const name of ['client_id', 'redirect_uri']) {
    if (query.duplicates.has(name)) {
      return errorPage('invalid_request', `The ${name} parameter is given more than once.`)
    }
  }
  const clientId = query.values.get('client_id')
  if (clientId === undefined)
    return errorPage('invalid_request', 'The client_id parameter is missing.')
  if (clientId.length > LIMITS.clientId) {
    return errorPage('invalid_request', 'The client_id parameter is too long.')
  }
  const client = await context.options.clients.findClient(clientId)
  if (client === undefined) return errorPage('invalid_client', 'The client is unknown.')
  const redirectUri = query.values.get('redirect_uri')
  // OAuth 2.1 §4.1.1 and our profile: the redirect URI is always sent, never inferred.
  if (redirectUri === undefined) {
    return errorPage('invalid_request', 'The redirect_uri parameter is missing.')
  }
  // RFC 9700 §2.1 and §4.1.3: exact string comparison, no prefix, case, port or path variants.
  if (
    redirectUri.length > LIMITS.redirectUri ||
    !(client.redirectUris ?? []).includes(redirectUri)
  ) {
    return errorPage('invalid_request', 'The redirect_uri is not registered for this client.')
  }
  return { client, redirectUri }
}

/** Checks everything but the client and redirect URI; throws the OAuthError to redirect with. */
function validate(context: ServerContext, client: OAuthClient, query: Parameters) {
  const [duplicate] = query.duplicates
  if (duplicate !== undefined) {
    throw new OAuthError(
      'invalid_request',
      `The ${duplicate.slice(0, 64)} parameter is given more than once.`,
    )
  }
  // OpenID Connect Core §6: request objects are not supported.
  if (query.values.has('request'))
    throw new OAuthError('request_not_supported', 'Request objects are not supported.')
  if (query.values.has('request_uri')) {
    throw new OAuthError('request_uri_not_supported', 'request_uri is not supported.')
  }
  const responseType = parameter(query, 'response_type', LIMITS.shortParameter)
  if (responseType === undefined)
    throw new OAuthError('invalid_request', 'The response_type parameter is missing.')
  // RFC 9700 §2.1.2: no implicit grant (token) and no hybrid flows (id_token): code only.
  if (responseType !== 'code') {
    throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported.')
  }
  const responseMode = parameter(query, 'response_mode', LIMITS.shortParameter)
  if (responseMode !== undefined && responseMode !== 'query') {
    throw new OAuthError('invalid_request', 'Only response_mode=query is supported.')
  }
  if (!client.grantTypes.includes('authorization_code')) {
    throw new OAuthError(
      'unauthorized_client',
      'The client may not use the authorization code grant.',
    )
  }
  const state = parameter(query, 'state', LIMITS.state)
  // Our profile: state is required (CSRF defence bound to the user agent, RFC 9700 §2.1).
  if (state === undefined)
    throw new OAuthError('invalid_request', 'The state parameter is missing.')
  // RFC 6749 Appendix A.5: state = 1*VSCHAR. Anything else is refused (and not echoed).
  if (!isVschar(state)) {
    throw new OAuthError(
      'invalid_request',
      'The state parameter must be printable ASCII (RFC 6749 Appendix A.5).',
    )
  }
  const scopeText = parameter(query, 'scope', LIMITS.scope)
  if (scopeText === undefined)
    throw new OAuthError('invalid_scope', 'The scope parameter is missing.')
  const scopes = parseScope(scopeText)
  requireSubset(scopes, client.scopes, 'this client')
  const challenge = parameter(query, 'code_challenge', LIMITS.codeChallenge)
  const method = parameter(query, 'code_challenge_method', LIMITS.shortParameter)
  // RFC 9700 §2.1.1: PKCE for every client; S256 only, and the method is always named (an
  // absent method means plain, RFC 7636 §4.3).
  if (challenge === undefined)
    throw new OAuthError('invalid_request', 'PKCE is required: code_challenge is missing.')
  if (method === undefined)
    throw new OAuthError('invalid_request', 'code_challenge_method is missing (S256 is required).')
  if (method !== 'S256')
    throw new OAuthError('invalid_request', 'Only the S256 code_challenge_method is supported.')
  if (!isS256Challenge(challenge)) {
    throw new OAuthError(
      'invalid_request',
      'The code_challenge is not an S256 challenge (43 base64url characters).',
    )
  }
  const nonce = parameter(query, 'nonce', LIMITS.nonce)
  // OpenID Connect Core §3.1.2.1 makes nonce optional for the code flow; our profile requires
  // it with openid, so that every ID token is bound to the request that asked for it.
  if (scopes.includes('openid') && nonce === undefined) {
    throw new OAuthError(
      'invalid_request',
      'The nonce parameter is required with the openid scope.',
    )
  }
  if (nonce !== undefined && !isVschar(nonce)) {
    throw new OAuthError('invalid_request', 'The nonce parameter must be printable ASCII.')
  }
  const resourceText = parameter(query, 'resource', LIMITS.resource)
  const { resources } = context.options
  const resource =
    resourceText === undefined
      ? resources[0]!
      : resources.find((r) => r.identifier === resourceText)
  // RFC 8707 §2: an unknown resource is invalid_target.
  if (resource === undefined)
    throw new OAuthError('invalid_target', 'The resource is not one this server issues tokens for.')
  const { prompt, maxAge, loginHint } = openIdParameters(query)
  // A hint may be any text (an e-mail address, a name), but no control character.
  if (loginHint !== undefined && hasControl(loginHint)) {
    throw new OAuthError('invalid_request', 'The login_hint parameter holds a control character.')
  }
  return {
    state,
    scopes,
    challenge,
    nonce,
    resource: resource.identifier,
    prompt,
    maxAge,
    loginHint,
  }
}

/**
 * `GET /authorize` (or `POST` with a form).
 *
 * @example
 * ```ts
 * const response = await handleAuthorize(context, new Request(`${issuer}/authorize?${query}`))
 * ```
 */
export async function handleAuthorize(context: ServerContext, request: Request): Promise<Response> {
  try {
    return await authorize(context, request)
  } catch (error) {
    return pageForFailure(context, error)
  }
}

/**
 * The page for what a store or registry threw: 503 with `Retry-After` when the store is full of
 * interactions, else 500. Never the details (they go to `onEvent`).
 *
 * @example
 * ```ts
 * return pageForFailure(context, error) // 500 HTML page
 * ```
 */
export function pageForFailure(context: ServerContext, error: unknown): Response {
  if (error instanceof OAuthError && error.error === 'temporarily_unavailable') {
    context.options.onEvent({ type: 'interaction_store_full', code: 'TEMPORARILY_UNAVAILABLE' })
    return unavailablePage(RETRY_AFTER_SECONDS)
  }
  context.options.onEvent({ type: 'server_error', code: 'SERVER_ERROR', error })
  return serverErrorPage()
}

const RETRY_AFTER_SECONDS = 30

async function authorize(context: ServerContext, request: Request): Promise<Response> {
  // OpenID Connect Core §3.1.2.1: GET and POST (a form). Not HEAD: it would start an interaction.
  let search: string
  if (request.method === 'GET') {
    search = new URL(request.url).search.slice(1)
    if (search.length > LIMITS.query) {
      return errorPage('invalid_request', 'The request is too long.', 414)
    }
  } else if (request.method === 'POST') {
    try {
      search = await readFormText(request, LIMITS.query)
    } catch (error) {
      if (error instanceof OAuthError) return errorPage(error.error, error.message)
      throw error
    }
  } else {
    return new Response(null, { status: 405, headers: { allow: 'GET, POST' } })
  }
  const query = parseUrlEncoded(search)
  if (query === undefined) return errorPage('invalid_request', 'The request is not well formed.')
  const trusted = await trust(context, query)
  if (trusted instanceof Response) return trusted
  const { client, redirectUri } = trusted
  // The state to echo in an error, when the request carried a usable one: never one that is
  // too long or not VSCHAR (RFC 6749 Appendix A.5), which is the error itself.
  const state = query.duplicates.has('state') ? undefined : query.values.get('state')
  const echoState =
    state !== undefined && state.length <= LIMITS.state && isVschar(state) ? state : undefined
  let checked: ReturnType<typeof validate>
  try {
    checked = validate(context, client, query)
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error
    return redirectWith(redirectUri, context.options.issuer, {
      error: error.error,
      error_description: error.message,
      state: echoState,
    })
  }
  const { clock, random, ttl, interactionUrl } = context.options
  const now = clock()
  const id = randomId(random)
  const binding = await newBinding(context, id)
  const interaction: InteractionRecord = {
    id,
    clientId: client.id,
    redirectUri,
    scopes: checked.scopes,
    state: checked.state,
    nonce: checked.nonce,
    codeChallenge: checked.challenge,
    resource: checked.resource,
    bindingHash: binding.bindingHash,
    prompt: checked.prompt,
    maxAge: checked.maxAge,
    loginHint: checked.loginHint,
    createdAt: now,
    expiresAt: now + ttl.interaction * 1000,
  }
  await context.store.saveInteraction(interaction)
  return new Response(null, {
    status: 303,
    headers: {
      location: interactionUrl(interaction.id),
      'cache-control': 'no-store',
      'set-cookie': binding.setCookie,
    },
  })
}
