/**
 * Client authentication at the token, introspection and revocation endpoints (RFC 6749 §2.3):
 * `client_secret_basic`, `client_secret_post`, and none for a public client (its `client_id`
 * alone). Secrets are compared as SHA-256 hashes in constant time, against every configured
 * hash so that the time does not say which one matched.
 *
 * @module
 */
import { decodeBase64, decodeBase64url } from '@api-blocks/core'
import { sha256, timingSafeEqual } from '@api-blocks/core/crypto'
import { type ClientRegistry, isConfidential, type OAuthClient } from './clients.ts'
import { OAuthError } from './error.ts'
import { type Parameters, parameter } from './form.ts'
import { LIMITS } from './limits.ts'

/**
 * How the client authenticated: the values of `token_endpoint_auth_methods_supported`
 * (RFC 8414 §2).
 */
type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none'

/**
 * A client that authenticated, and how.
 *
 * @example
 * ```ts
 * const { client, method }: AuthenticatedClient = await authenticateClient(request, form, registry, options)
 * ```
 */
export interface AuthenticatedClient {
  readonly client: OAuthClient
  readonly method: ClientAuthMethod
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

function formDecode(text: string): string | undefined {
  // Generated ids and secrets (base64url) have nothing to decode.
  if (!text.includes('%') && !text.includes('+')) return text
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}

/** The text of base64 `encoded` (padding optional), decoded as UTF-8; `undefined` when either is malformed. */
function basicText(encoded: string): string | undefined {
  const bytes = decodeBase64(encoded, { loose: true })
  if (bytes === undefined) return undefined
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  }
}

/**
 * The id and secret of an `Authorization: Basic` field (RFC 7617 §2), each
 * form-url-decoded as RFC 6749 §2.3.1 requires (oauth4webapi encodes them so), or `undefined`
 * when the field is not Basic. Malformed Basic credentials throw `invalid_client`.
 *
 * @example
 * ```ts
 * basicCredentials('Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW') // { id: 's6BhdRkqt3', secret: 'gX1fBat3bV' }
 * ```
 */
export function basicCredentials(field: string): { id: string; secret: string } | undefined {
  const space = field.indexOf(' ')
  const scheme = space === -1 ? field : field.slice(0, space)
  if (scheme.toLowerCase() !== 'basic') return undefined
  const bad = (): never => {
    throw new OAuthError('invalid_client', 'The Basic credentials are malformed.')
  }
  const encoded = field.slice(space + 1).trim()
  if (space === -1 || encoded.length > LIMITS.authorization) return bad()
  const text = basicText(encoded)
  if (text === undefined) return bad()
  const colon = text.indexOf(':')
  if (colon === -1) return bad()
  const id = formDecode(text.slice(0, colon))
  const secret = formDecode(text.slice(colon + 1))
  if (id === undefined || secret === undefined || id === '') return bad()
  return { id, secret }
}

// The decoded hashes of each client's `secretHashes` list, decoded once per list rather than
// per request. The strings are kept and compared (equal strings are usually the same string, a
// pointer check), so a host that changes a list in place (a rotated secret pushed, a leaked one
// removed) is never answered from an old decoding.
const decodedHashes = new WeakMap<
  readonly string[],
  { readonly hashes: readonly string[]; readonly decoded: readonly (Uint8Array | undefined)[] }
>()

function expectedHashes(hashes: readonly string[]): readonly (Uint8Array | undefined)[] {
  const cached = decodedHashes.get(hashes)
  if (
    cached !== undefined &&
    cached.hashes.length === hashes.length &&
    cached.hashes.every((hash, index) => hash === hashes[index])
  ) {
    return cached.decoded
  }
  const decoded = hashes.map((hash) => decodeBase64url(hash))
  decodedHashes.set(hashes, { hashes: [...hashes], decoded })
  return decoded
}

async function secretMatches(client: OAuthClient, secret: string): Promise<boolean> {
  const presented = await sha256(secret)
  let match = false
  for (const expected of expectedHashes(client.secretHashes ?? [])) {
    // Every hash is compared, whatever the result so far: no early exit.
    if (expected !== undefined && timingSafeEqual(presented, expected)) match = true
  }
  return match
}

/**
 * Options of {@link authenticateClient}.
 *
 * @example
 * ```ts
 * const options: AuthenticateOptions = { allowPublic: true, onFailure: (id) => console.warn(id) }
 * ```
 */
export interface AuthenticateOptions {
  /** Whether a public client (no secret) may call this endpoint with its `client_id` alone. */
  readonly allowPublic: boolean
  /** Told the client id (when one was given) of every failed authentication. */
  readonly onFailure: (clientId: string | undefined) => void
}

/**
 * Authenticates the client of a token, introspection or revocation request. Refuses with
 * `invalid_request` a request that uses two methods at once (RFC 6749 §2.3: "MUST NOT use more
 * than one authentication method in each request"), and with `invalid_client` (401) an unknown
 * client, a wrong or missing secret, or a public client where one is not allowed.
 *
 * @example
 * ```ts
 * const { client } = await authenticateClient(request, form, registry, { allowPublic: false, onFailure })
 * ```
 */
export async function authenticateClient(
  request: Request,
  form: Parameters,
  registry: ClientRegistry,
  options: AuthenticateOptions,
): Promise<AuthenticatedClient> {
  const header = request.headers.get('authorization')
  const formId = parameter(form, 'client_id', LIMITS.clientId)
  const formSecret = parameter(form, 'client_secret', LIMITS.clientSecret)
  const fail = (clientId: string | undefined, description: string): never => {
    options.onFailure(clientId)
    throw new OAuthError('invalid_client', description)
  }
  let basic: { id: string; secret: string } | undefined
  if (header !== null) {
    try {
      basic = basicCredentials(header)
    } catch (error) {
      options.onFailure(undefined)
      throw error
    }
    if (basic === undefined) fail(undefined, 'Only the Basic scheme authenticates clients here.')
  }
  let id: string
  let secret: string | undefined
  let method: ClientAuthMethod
  if (basic !== undefined) {
    if (formSecret !== undefined) {
      throw new OAuthError('invalid_request', 'The client used two authentication methods.')
    }
    // RFC 6749 §2.3.1 lets a client repeat its id in the body; it must be the same one.
    if (formId !== undefined && formId !== basic.id) {
      throw new OAuthError('invalid_request', 'The client_id does not match the Basic credentials.')
    }
    if (basic.id.length > LIMITS.clientId || basic.secret.length > LIMITS.clientSecret) {
      fail(undefined, 'The Basic credentials are too long.')
    }
    ;({ id, secret } = basic)
    method = 'client_secret_basic'
  } else if (formId !== undefined) {
    id = formId
    secret = formSecret
    method = formSecret === undefined ? 'none' : 'client_secret_post'
  } else {
    return fail(undefined, 'The client did not authenticate.')
  }
  const client = await registry.findClient(id)
  if (client === undefined) return fail(id, 'The client is unknown or did not authenticate.')
  if (isConfidential(client)) {
    if (secret === undefined || !(await secretMatches(client, secret))) {
      return fail(id, 'The client is unknown or did not authenticate.')
    }
  } else if (secret !== undefined || !options.allowPublic) {
    // A public client has no secret to check; at an endpoint that needs authentication it has none.
    return fail(id, 'The client is unknown or did not authenticate.')
  }
  return { client, method }
}
