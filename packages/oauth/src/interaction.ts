/**
 * The hand-off between the server and the host's login and consent pages: what the pages show
 * ({@link InteractionDetails}), and the two ways back: the user approved (a code goes to the
 * client) or refused (`access_denied`). Each interaction completes once (the store's
 * `takeInteraction` is atomic).
 *
 * @module
 */
import { pageForFailure, redirectWith } from './authorize.ts'
import { clearBinding, isBound } from './binding.ts'
import type { ServerContext } from './context.ts'
import { errorPage } from './html.ts'
import { LIMITS } from './limits.ts'
import type { CodeRecord, InteractionRecord } from './store.ts'
import { isIdShape, randomId, randomSecret } from './tokens.ts'

/**
 * What the host's login and consent page shows about a request in progress.
 *
 * @example
 * ```ts
 * const details = await server.interaction(id, request)
 * if (details === undefined) return new Response('This sign-in link expired.', { status: 400 })
 * render(`${details.client.name} asks for: ${details.scopes.join(', ')}`)
 * ```
 */
export interface InteractionDetails {
  readonly id: string
  readonly client: { readonly id: string; readonly name?: string | undefined }
  /** The scopes asked for; the user approves these or fewer. */
  readonly scopes: readonly string[]
  /** The resource (audience) of the tokens. */
  readonly resource: string
  /** Where the user goes back to (the client's registered redirect URI), to show its origin. */
  readonly redirectUri: string
  /**
   * The OpenID Connect `prompt` values asked (`login`: authenticate the user again even with a
   * session; `consent`: ask again; `select_account`), when any. `none` never reaches here.
   */
  readonly prompt?: readonly string[] | undefined
  /**
   * The OpenID Connect `max_age`, seconds: the user's authentication must be at most this old
   * (`completeInteraction` refuses an older `authTime` with `login_required`).
   */
  readonly maxAge?: number | undefined
  /** The OpenID Connect `login_hint` (an email or a user name to prefill), when given. */
  readonly loginHint?: string | undefined
  /** ms since the epoch. */
  readonly expiresAt: number
}

/**
 * What the host reports after the user signed in and consented.
 *
 * @example
 * ```ts
 * const result: InteractionResult = { subject: 'user-1', scopes: ['openid', 'read:orders'] }
 * ```
 */
export interface InteractionResult {
  /** The authenticated end user: the `sub` of every token (at most 255 characters). */
  readonly subject: string
  /**
   * The scopes the user approved: a subset of those asked. Only these are bound to tokens. None
   * at all is a refusal: the client gets `access_denied`.
   */
  readonly scopes: readonly string[]
  /** When the user authenticated, seconds since the epoch (default: now). */
  readonly authTime?: number | undefined
}

const EXPIRED =
  'This sign-in request is unknown or expired. Go back to the application and start again.'
const UNBOUND =
  'This sign-in request was started in another browser, or its cookie is gone. Go back to the application and start again.'

/**
 * The live interaction `id` when `request` is from the browser that started it; else the page
 * to answer. A store failure throws.
 */
async function boundInteraction(
  context: ServerContext,
  id: string,
  request: Request | undefined,
  now: number,
): Promise<InteractionRecord | Response> {
  if (!isIdShape(id)) return errorPage('invalid_request', EXPIRED)
  const found = await context.store.findInteraction(id, now)
  if (found === undefined) return errorPage('invalid_request', EXPIRED)
  if (!(await isBound(context, request, id, found.bindingHash))) {
    return errorPage('invalid_request', UNBOUND)
  }
  return found
}

/**
 * The interaction's details, or `undefined` when unknown, expired, or `request` does not come
 * from the browser that started it (its binding cookie is missing or wrong).
 *
 * @example
 * ```ts
 * const details = await interactionDetails(context, id, request) // undefined when expired
 * ```
 */
export async function interactionDetails(
  context: ServerContext,
  id: string,
  request: Request,
): Promise<InteractionDetails | undefined> {
  const found = await boundInteraction(context, id, request, context.options.clock())
  if (found instanceof Response) return undefined
  const client = await context.options.clients.findClient(found.clientId)
  const details: InteractionDetails = {
    id: found.id,
    client: { id: found.clientId, name: client?.name },
    scopes: found.scopes,
    resource: found.resource,
    redirectUri: found.redirectUri,
    expiresAt: found.expiresAt,
  }
  return {
    ...details,
    ...(found.prompt === undefined ? {} : { prompt: found.prompt }),
    ...(found.maxAge === undefined ? {} : { maxAge: found.maxAge }),
    ...(found.loginHint === undefined ? {} : { loginHint: found.loginHint }),
  }
}

function checkResult(interaction: InteractionRecord, result: InteractionResult): void {
  if (
    typeof result.subject !== 'string' ||
    result.subject === '' ||
    result.subject.length > LIMITS.subject
  ) {
    throw new TypeError(`completeInteraction(): subject is 1 to ${LIMITS.subject} characters`)
  }
  const extra = result.scopes.find((scope) => !interaction.scopes.includes(scope))
  if (extra !== undefined) {
    throw new TypeError(`completeInteraction(): the scope ${extra} was not asked for`)
  }
  if (
    result.authTime !== undefined &&
    (!Number.isInteger(result.authTime) || result.authTime < 0)
  ) {
    throw new TypeError('completeInteraction(): authTime is whole seconds since the epoch')
  }
}

/** Why the result cannot give a code (an error redirect), or undefined. */
function refusal(
  interaction: InteractionRecord,
  result: InteractionResult,
  authTime: number,
  now: number,
): { error: string; description: string } | undefined {
  // RFC 6749 §4.1.2.1: the user approved nothing: a refusal.
  if (result.scopes.length === 0) {
    return { error: 'access_denied', description: 'The user approved no scope.' }
  }
  // OpenID Connect Core §3.1.2.1: max_age bounds the age of the authentication; prompt=login
  // asks for one made during this request.
  if (interaction.maxAge !== undefined && authTime < Math.floor(now / 1000) - interaction.maxAge) {
    return { error: 'login_required', description: 'The sign-in is older than max_age allows.' }
  }
  if (
    interaction.prompt?.includes('login') === true &&
    authTime < Math.floor(interaction.createdAt / 1000)
  ) {
    return { error: 'login_required', description: 'prompt=login asked for a new sign-in.' }
  }
  return undefined
}

/**
 * Completes the interaction: saves a code bound to the client, redirect URI, PKCE challenge,
 * nonce, subject and the approved scopes, with its family id chosen now, and answers the 303
 * to the redirect URI with `code`, `state` and `iss`, clearing the binding cookie. Throws a
 * TypeError for a result that is not a subset of the request (the host's bug, before anything
 * is taken). A request from another browser, or an unknown or expired id, gets the 400 page;
 * a store failure the 500 page.
 *
 * @example
 * ```ts
 * return completeInteraction(context, id, { subject: 'user-1', scopes: ['openid'] }, request)
 * ```
 */
export async function completeInteraction(
  context: ServerContext,
  id: string,
  result: InteractionResult,
  request: Request,
): Promise<Response> {
  const { clock, random, ttl, issuer } = context.options
  const now = clock()
  let found: InteractionRecord | Response
  try {
    found = await boundInteraction(context, id, request, now)
  } catch (error) {
    return pageForFailure(context, error)
  }
  if (found instanceof Response) return found
  checkResult(found, result)
  try {
    const interaction = await context.store.takeInteraction(id, now)
    if (interaction === undefined) return errorPage('invalid_request', EXPIRED)
    const authTime = result.authTime ?? Math.floor(now / 1000)
    const refused = refusal(interaction, result, authTime, now)
    if (refused !== undefined) {
      const response = redirectWith(interaction.redirectUri, issuer, {
        error: refused.error,
        error_description: refused.description,
        state: interaction.state,
      })
      response.headers.append('set-cookie', clearBinding(issuer, id))
      return response
    }
    const code = randomSecret(random)
    const record: CodeRecord = {
      codeHash: await context.hash(code),
      clientId: interaction.clientId,
      redirectUri: interaction.redirectUri,
      subject: result.subject,
      // In the order asked, only those approved.
      scopes: interaction.scopes.filter((scope) => result.scopes.includes(scope)),
      codeChallenge: interaction.codeChallenge,
      nonce: interaction.nonce,
      authTime,
      resource: interaction.resource,
      familyId: randomId(random),
      expiresAt: now + ttl.code * 1000,
    }
    await context.store.saveCode(record)
    const response = redirectWith(interaction.redirectUri, issuer, {
      code,
      state: interaction.state,
    })
    response.headers.append('set-cookie', clearBinding(issuer, id))
    return response
  } catch (error) {
    return pageForFailure(context, error)
  }
}

/**
 * The user refused: a 303 to the redirect URI with `error=access_denied` (RFC 6749 §4.1.2.1),
 * clearing the binding cookie. Only for the browser that started the interaction.
 *
 * @example
 * ```ts
 * return denyInteraction(context, id, request) // 303 …?error=access_denied&state=…&iss=…
 * ```
 */
export async function denyInteraction(
  context: ServerContext,
  id: string,
  request: Request,
): Promise<Response> {
  const { clock, issuer, onEvent } = context.options
  try {
    const now = clock()
    const found = await boundInteraction(context, id, request, now)
    if (found instanceof Response) return found
    const interaction = await context.store.takeInteraction(id, now)
    if (interaction === undefined) return errorPage('invalid_request', EXPIRED)
    onEvent({ type: 'authorization_denied', code: 'ACCESS_DENIED', clientId: interaction.clientId })
    const response = redirectWith(interaction.redirectUri, issuer, {
      error: 'access_denied',
      error_description: 'The user did not approve the request.',
      state: interaction.state,
    })
    response.headers.append('set-cookie', clearBinding(issuer, id))
    return response
  } catch (error) {
    return pageForFailure(context, error)
  }
}
