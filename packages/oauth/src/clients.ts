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
 * const spa: ClientConfig = {
 *   id: 'demo-spa', public: true, redirectUris: ['http://127.0.0.1:5173/callback'],
 *   grantTypes: ['authorization_code', 'refresh_token'], scopes: ['openid', 'read:orders'],
 * }
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
   * `true` for a public client (RFC 6749 §2.1: a browser or native app that cannot keep a
   * secret), which authenticates with `client_id` alone, has no secret hashes and cannot use
   * `client_credentials`. Only this flag makes a client public: a client without it whose
   * secrets were all removed is a confidential client that can no longer authenticate.
   */
  readonly public?: boolean | undefined
  /**
   * base64url SHA-256 of each valid secret ({@link hashClientSecret}); several while a secret
   * is rotated. At least one for a confidential client; none for a public one.
   */
  readonly secretHashes?: readonly string[] | undefined
  /**
   * The resource identifiers (RFC 8707, the `aud` of tokens) this client serves as a resource
   * server: the introspection endpoint tells it about tokens of these audiences, besides its
   * own tokens (RFC 7662 §4: a caller learns nothing of tokens that are not for it).
   */
  readonly resources?: readonly string[] | undefined
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

const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', '[::1]', 'localhost']
const REFUSED_SCHEMES: readonly string[] = ['javascript:', 'data:', 'vbscript:', 'file:']

/**
 * Why `uri` cannot be a redirect URI, or `undefined` when it can: https; http only for a
 * loopback host (RFC 8252 §7.3, RFC 9700 §2.1); a private-use scheme of a native app only in
 * reverse domain form, with a '.' (RFC 8252 §7.1); never javascript:, data:, vbscript: or
 * file:; absolute, without a fragment (RFC 6749 §3.1.2).
 *
 * @example
 * ```ts
 * redirectUriProblem('https://app.example/cb') // undefined
 * redirectUriProblem('javascript:alert(1)') // 'its scheme is refused'
 * ```
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (typeof uri !== 'string') return 'it is not a string'
  if (uri.length > LIMITS.redirectUri) return `it is longer than ${LIMITS.redirectUri}`
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return 'it is not an absolute URL'
  }
  // RFC 6749 §3.1.2: absolute, no fragment.
  if (url.hash !== '' || uri.includes('#')) return 'it has a fragment'
  const scheme = url.protocol.toLowerCase()
  if (REFUSED_SCHEMES.includes(scheme)) return 'its scheme is refused'
  if (scheme === 'https:') return undefined
  if (scheme === 'http:') {
    return LOOPBACK_HOSTS.includes(url.hostname) ? undefined : 'http is only for loopback hosts'
  }
  // RFC 8252 §7.1: a private-use scheme is a reversed domain name the app owns.
  return scheme.includes('.') ? undefined : 'a private-use scheme is a reversed domain name'
}

function checkRedirectUri(clientId: string, uri: string): void {
  const problem = redirectUriProblem(uri)
  if (problem !== undefined) {
    throw new TypeError(`Client ${clientId}: the redirect URI ${uri} is refused: ${problem}`)
  }
}

/**
 * Checks one client's configuration, throwing a TypeError that names what is wrong. Runs on
 * the clients of {@link staticClients} once, and on every client a custom registry returns.
 *
 * @example
 * ```ts
 * checkClientConfig({ id: 'spa', public: true, grantTypes: ['refresh_token'], scopes: [] })
 * ```
 */
function checkClientConfig(client: ClientConfig): void {
  if (typeof client !== 'object' || client === null) throw new TypeError('A client is an object')
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
  if (client.public !== undefined && typeof client.public !== 'boolean') {
    throw new TypeError(`Client ${id}: public is true or false`)
  }
  const secrets = client.secretHashes?.length ?? 0
  // RFC 6749 §2.1: a client is public or confidential by configuration, never by accident.
  if (client.public === true && client.secretHashes !== undefined) {
    throw new TypeError(`Client ${id}: a public client has no secretHashes`)
  }
  if (client.public !== true && secrets === 0) {
    throw new TypeError(
      `Client ${id}: a confidential client needs at least one secret hash (or set public: true)`,
    )
  }
  if (client.grantTypes.includes('client_credentials') && client.public === true) {
    throw new TypeError(`Client ${id}: client_credentials needs a secret (a confidential client)`)
  }
  if (
    client.grantTypes.includes('authorization_code') &&
    (client.redirectUris ?? []).length === 0
  ) {
    throw new TypeError(`Client ${id}: authorization_code needs at least one redirect URI`)
  }
  if (!Array.isArray(client.scopes)) throw new TypeError(`Client ${id}: scopes is a list`)
  for (const scope of client.scopes) {
    if (!isValidScope(scope)) throw new TypeError(`Client ${id}: the scope ${scope} is not valid`)
  }
  for (const resource of client.resources ?? []) {
    if (typeof resource !== 'string' || resource === '') {
      throw new TypeError(`Client ${id}: a resource is a non-empty string`)
    }
  }
}

/**
 * A registry that checks every client the host's `registry` returns with the rules of
 * {@link staticClients}: a client that breaks them (a redirect URI with `javascript:`, a
 * client both public and with secrets) is treated as unknown, so it gets the error page at
 * `/authorize` and `invalid_client` elsewhere, never a redirect or a token. `onInvalid` hears
 * why.
 *
 * @example
 * ```ts
 * const registry = checkedRegistry(hostRegistry, (id, problem) => log.warn(id, problem))
 * ```
 */
export function checkedRegistry(
  registry: ClientRegistry,
  onInvalid: (clientId: string, problem: string) => void,
): ClientRegistry {
  return {
    async findClient(id) {
      const client = await registry.findClient(id)
      if (client === undefined) return undefined
      try {
        checkClientConfig(client)
        if (client.id !== id) throw new TypeError(`the registry answered client ${client.id}`)
      } catch (error) {
        onInvalid(id, (error as Error).message)
        return undefined
      }
      return client
    },
  }
}

/**
 * A {@link ClientRegistry} of a fixed list of clients, checked once here: ids unique, secret
 * hashes well formed (at least one unless `public: true`, none with it), redirect URIs https
 * (http for loopback, private-use schemes with a '.') without fragments, scopes in the
 * grammar, and `client_credentials` only for confidential clients.
 *
 * @example
 * ```ts
 * const clients = staticClients([
 *   { id: 'demo-spa', public: true, redirectUris: ['http://127.0.0.1:5173/callback'],
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
 * Whether the client is confidential (RFC 6749 §2.1): every client not marked `public: true`,
 * secrets or not (one without secrets cannot authenticate).
 *
 * @example
 * ```ts
 * isConfidential({ id: 'spa', public: true, grantTypes: ['authorization_code'], scopes: [] }) // false
 * ```
 */
export function isConfidential(client: OAuthClient): boolean {
  return client.public !== true
}
