/**
 * Clients: what the server knows of each (its secrets as hashes, its exact redirect URIs, its
 * grant types and the most it may be granted), where it finds them (a {@link ClientRegistry}),
 * and the registry of a fixed list ({@link staticClients}).
 *
 * @module
 */
import { sha256Base64url } from '@api-blocks/core/crypto'
import { LIMITS } from './limits.ts'
import { isValidScope } from './scope.ts'

/**
 * The grant types a client may use. The implicit and password grants do not exist here
 * (RFC 9700 §2.1.2 and §2.4).
 *
 * @example
 * ```ts
 * const grants: GrantType[] = ['authorization_code', 'refresh_token']
 * ```
 */
export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials'

/**
 * One client, as configured. The same shape is what a {@link ClientRegistry} returns
 * ({@link OAuthClient}).
 *
 * @example
 * ```ts
 * const backend: ClientConfig = {
 *   id: 'demo-backend',
 *   secretHashes: [await hashClientSecret('demo-backend-secret')],
 *   grantTypes: ['client_credentials'],
 *   scopes: ['read:orders', 'write:orders'],
 * }
 * ```
 */
export interface ClientConfig {
  /** The `client_id`, at most 256 characters. */
  readonly id: string
  /** A name for the consent page. */
  readonly name?: string | undefined
  /**
   * base64url SHA-256 of each valid secret ({@link hashClientSecret}); several while a secret
   * is rotated. Absent or empty: a public client, which authenticates with `client_id` alone
   * and cannot use `client_credentials`.
   */
  readonly secretHashes?: readonly string[] | undefined
  /** The redirect URIs, compared with the request's as exact strings (RFC 9700 §2.1). */
  readonly redirectUris?: readonly string[] | undefined
  /** The grants this client may use. */
  readonly grantTypes: readonly GrantType[]
  /** The most this client may be granted. */
  readonly scopes: readonly string[]
}

/**
 * A client as a {@link ClientRegistry} returns it.
 *
 * @example
 * ```ts
 * const client: OAuthClient | undefined = await registry.findClient('demo-spa')
 * ```
 */
export type OAuthClient = ClientConfig

/**
 * Where the server finds clients: a fixed list ({@link staticClients}) or a database of the
 * host's.
 *
 * @example
 * ```ts
 * const registry: ClientRegistry = {
 *   findClient: async (id) => (await db.clients.find(id)) ?? undefined,
 * }
 * ```
 */
export interface ClientRegistry {
  /** The client, or `undefined` when there is none with this id. */
  findClient(id: string): Promise<OAuthClient | undefined>
}

/**
 * The hash a {@link ClientConfig} keeps of a client secret: base64url SHA-256. Client secrets
 * are random (256 bits), so a fast hash is the right one; slow password hashes are for user
 * passwords.
 *
 * @example
 * ```ts
 * await hashClientSecret('demo-backend-secret') // 43 base64url characters
 * ```
 */
export function hashClientSecret(secret: string): Promise<string> {
  return sha256Base64url(secret)
}

const HASH = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/
const GRANTS: readonly string[] = ['authorization_code', 'refresh_token', 'client_credentials']

function checkRedirectUri(clientId: string, uri: string): void {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    throw new TypeError(`Client ${clientId}: the redirect URI ${uri} is not an absolute URL`)
  }
  // RFC 6749 §3.1.2: absolute, no fragment.
  if (url.hash !== '' || uri.includes('#')) {
    throw new TypeError(`Client ${clientId}: a redirect URI has no fragment (${uri})`)
  }
  if (uri.length > LIMITS.redirectUri) {
    throw new TypeError(`Client ${clientId}: a redirect URI is at most ${LIMITS.redirectUri} long`)
  }
}

/**
 * Checks one client's configuration, throwing a TypeError that names what is wrong.
 */
function checkClientConfig(client: ClientConfig): void {
  if (typeof client.id !== 'string' || client.id === '' || client.id.length > LIMITS.clientId) {
    throw new TypeError(`A client id is 1 to ${LIMITS.clientId} characters`)
  }
  const id = client.id
  for (const hash of client.secretHashes ?? []) {
    if (!HASH.test(hash)) {
      throw new TypeError(`Client ${id}: a secret hash is the base64url SHA-256 of the secret`)
    }
  }
  for (const uri of client.redirectUris ?? []) checkRedirectUri(id, uri)
  if (!Array.isArray(client.grantTypes) || client.grantTypes.length === 0) {
    throw new TypeError(`Client ${id}: grantTypes lists at least one grant`)
  }
  for (const grant of client.grantTypes) {
    if (!GRANTS.includes(grant)) throw new TypeError(`Client ${id}: unknown grant type ${grant}`)
  }
  const confidential = (client.secretHashes?.length ?? 0) > 0
  if (client.grantTypes.includes('client_credentials') && !confidential) {
    throw new TypeError(`Client ${id}: client_credentials needs a secret (a confidential client)`)
  }
  if (
    client.grantTypes.includes('authorization_code') &&
    (client.redirectUris ?? []).length === 0
  ) {
    throw new TypeError(`Client ${id}: authorization_code needs at least one redirect URI`)
  }
  for (const scope of client.scopes) {
    if (!isValidScope(scope)) throw new TypeError(`Client ${id}: the scope ${scope} is not valid`)
  }
}

/**
 * A {@link ClientRegistry} of a fixed list of clients, checked once here: ids unique, secret
 * hashes well formed, redirect URIs absolute without fragments, scopes in the grammar, and
 * `client_credentials` only for confidential clients.
 *
 * @example
 * ```ts
 * const clients = staticClients([
 *   { id: 'demo-spa', redirectUris: ['http://127.0.0.1:5173/callback'],
 *     grantTypes: ['authorization_code', 'refresh_token'], scopes: ['openid', 'read:orders'] },
 * ])
 * await clients.findClient('demo-spa')
 * ```
 */
export function staticClients(clients: readonly ClientConfig[]): ClientRegistry {
  const byId = new Map<string, ClientConfig>()
  for (const client of clients) {
    checkClientConfig(client)
    if (byId.has(client.id)) throw new TypeError(`The client id ${client.id} is used twice`)
    byId.set(client.id, client)
  }
  return { findClient: async (id) => byId.get(id) }
}

/**
 * Whether the client has a secret (RFC 6749 §2.1: confidential).
 *
 * @example
 * ```ts
 * isConfidential({ id: 'spa', grantTypes: ['authorization_code'], scopes: [] }) // false
 * ```
 */
export function isConfidential(client: OAuthClient): boolean {
  return (client.secretHashes?.length ?? 0) > 0
}
