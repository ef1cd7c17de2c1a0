/**
 * The hand-off between the server and the host's login and consent pages: what the pages show
 * ({@link InteractionDetails}), and the two ways back: the user approved (a code goes to the
 * client) or refused (`access_denied`). Each interaction completes once (the store's
 * `takeInteraction` is atomic).
 *
 * @module
 */
import { redirectWith } from './authorize.ts'
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
 * const details = await server.interaction(id)
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
  /** The scopes the user approved: a subset of those asked. Only these are bound to tokens. */
  readonly scopes: readonly string[]
  /** When the user authenticated, seconds since the epoch (default: now). */
  readonly authTime?: number | undefined
}

/**
 * The interaction's details, or `undefined` when unknown or expired.
 *
 * @example
 * ```ts
 * const details = await interactionDetails(context, id) // undefined when expired
 * ```
 */
export async function interactionDetails(
  context: ServerContext,
  id: string,
): Promise<InteractionDetails | undefined> {
  if (!isIdShape(id)) return undefined
  const found = await context.store.findInteraction(id, context.options.clock())
  if (found === undefined) return undefined
  const client = await context.options.clients.findClient(found.clientId)
  return {
    id: found.id,
    client: { id: found.clientId, name: client?.name },
    scopes: found.scopes,
    resource: found.resource,
    expiresAt: found.expiresAt,
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

const EXPIRED =
  'This sign-in request is unknown or expired. Go back to the application and start again.'

/**
 * Completes the interaction: saves a code bound to the client, redirect URI, PKCE challenge,
 * nonce, subject and the approved scopes, with its family id chosen now, and answers the 303
 * to the redirect URI with `code`, `state` and `iss`. Throws a TypeError for a result that is
 * not a subset of the request (the host's bug, before anything is taken).
 *
 * @example
 * ```ts
 * return completeInteraction(context, id, { subject: 'user-1', scopes: ['openid'] })
 * ```
 */
export async function completeInteraction(
  context: ServerContext,
  id: string,
  result: InteractionResult,
): Promise<Response> {
  const { clock, random, ttl, issuer } = context.options
  const now = clock()
  if (!isIdShape(id)) return errorPage('invalid_request', EXPIRED)
  const found = await context.store.findInteraction(id, now)
  if (found === undefined) return errorPage('invalid_request', EXPIRED)
  checkResult(found, result)
  const interaction = await context.store.takeInteraction(id, now)
  if (interaction === undefined) return errorPage('invalid_request', EXPIRED)
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
    authTime: result.authTime ?? Math.floor(now / 1000),
    resource: interaction.resource,
    familyId: randomId(random),
    expiresAt: now + ttl.code * 1000,
  }
  await context.store.saveCode(record)
  return redirectWith(interaction.redirectUri, issuer, { code, state: interaction.state })
}

/**
 * The user refused: a 303 to the redirect URI with `error=access_denied` (RFC 6749 §4.1.2.1).
 *
 * @example
 * ```ts
 * return denyInteraction(context, id) // 303 …?error=access_denied&state=…&iss=…
 * ```
 */
export async function denyInteraction(context: ServerContext, id: string): Promise<Response> {
  const { clock, issuer, onEvent } = context.options
  if (!isIdShape(id)) return errorPage('invalid_request', EXPIRED)
  const interaction = await context.store.takeInteraction(id, clock())
  if (interaction === undefined) return errorPage('invalid_request', EXPIRED)
  onEvent({ type: 'authorization_denied', code: 'ACCESS_DENIED', clientId: interaction.clientId })
  return redirectWith(interaction.redirectUri, issuer, {
    error: 'access_denied',
    error_description: 'The user did not approve the request.',
    state: interaction.state,
  })
}
