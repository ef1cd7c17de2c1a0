// Who may sign in and which clients may ask for tokens: the demo user and clients built in, more
// from the JSON file OAUTH_CONFIG names (docs/service.md, "OAuth"). Users carry scrypt password
// hashes (passwords.ts), clients SHA-256 hashes of their secrets: nothing here is a secret in
// the clear.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { ConfigError } from '../config.ts'
import { isPasswordHash } from './passwords.ts'

/** A client of the authorisation server (the `ClientConfig` of @api-blocks/oauth). */
export interface ServiceClient {
  id: string
  name?: string
  /**
   * `true` for a public client (a browser or native app: no secret, no client credentials).
   * Only this flag makes a client public: one without it needs at least one secret hash.
   */
  public?: boolean
  /** base64url SHA-256 of each valid secret (several while one is rotated); none when public. */
  secretHashes?: readonly string[]
  /**
   * The resource identifiers this client serves as a resource server: introspection tells it
   * about other clients' tokens for these audiences (otherwise only about its own tokens).
   */
  resources?: readonly string[]
  redirectUris?: readonly string[]
  grantTypes: readonly ('authorization_code' | 'refresh_token' | 'client_credentials')[]
  scopes: readonly string[]
}

/** Someone who may sign in on the login page. */
export interface ServiceUser {
  username: string
  /** The `sub` of their tokens: stable, never reassigned. */
  subject: string
  passwordHash: string
  /** ID token and userinfo claims: name (profile), email and email_verified (email). */
  claims: { name?: string; email?: string; email_verified?: boolean }
}

/** The account of a subject, as the authorisation server's `findAccount` answers it. */
export interface ServiceAccount {
  subject: string
  username: string
  claims: Record<string, unknown>
}

/** The scopes of the orders API, and what the consent page says about each. */
export const API_SCOPES: Readonly<Record<string, string>> = {
  'read:orders': 'Read your orders',
  'write:orders': 'Create, change, cancel and delete your orders',
  'manage:webhooks': 'Manage webhooks',
}

/** The OpenID Connect scopes, and what the consent page says about each. */
export const OIDC_SCOPES: Readonly<Record<string, string>> = {
  openid: 'Know who you are (your user id)',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Stay signed in: access your orders while you are away',
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url')

/** The demo user: `ada` / `lovelace` (a hash of N = 2^15, quick enough for tests). */
export const DEMO_USERS: readonly ServiceUser[] = [
  {
    username: 'ada',
    subject: 'ada',
    passwordHash:
      'scrypt$15$8$1$YWRhLWRlbW8tc2FsdC0wMQ$bQ_p7f4h0rHwy5Rg8d4xpyF7MoXeTO9y-OJJ-SgNF9k',
    claims: { name: 'Ada Lovelace', email: 'ada@example.com', email_verified: true },
  },
]

/** Where the demo single-page application lives (a Vite dev server's address). */
const DEMO_SPA_REDIRECT_URI = 'http://127.0.0.1:5173/callback'

/**
 * The demo back end (confidential, secret `demo-backend-secret`): client credentials and the
 * code flow. It is also the API's resource server in the demos: {@link demoClients} gives it
 * `resources: [<public URL>/v1]`, so it may introspect the tokens users grant other clients
 * for the API (RFC 7662 §4: otherwise introspection tells a client only of its own tokens).
 */
const DEMO_BACKEND: ServiceClient = {
  id: 'demo-backend',
  name: 'Demo back end',
  secretHashes: [sha256('demo-backend-secret')],
  redirectUris: ['http://127.0.0.1:8080/callback'],
  grantTypes: ['client_credentials', 'authorization_code'],
  scopes: ['read:orders', 'write:orders', 'manage:webhooks'],
}

/**
 * The demo clients: `demo-backend` (confidential, secret `demo-backend-secret`: client
 * credentials and the code flow) and `demo-spa` (public: the code flow with PKCE and a rotating
 * refresh token when offline_access is granted). As listed here demo-backend serves no
 * resource; {@link demoClients} adds the API's.
 */
export const DEMO_CLIENTS: readonly ServiceClient[] = [
  DEMO_BACKEND,
  {
    id: 'demo-spa',
    name: 'Demo single-page app',
    public: true,
    redirectUris: [DEMO_SPA_REDIRECT_URI],
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders', 'write:orders'],
  },
]

/**
 * `clients` with the demo back end (the very one of {@link DEMO_CLIENTS}, not a configured
 * client of the same id) serving `resource`, the API's identifier: it may then introspect
 * demo-spa's tokens as the API's resource server would.
 *
 * @example
 * ```ts
 * demoClients(DEMO_CLIENTS, 'http://localhost:3000/v1')[0]?.resources // ['http://localhost:3000/v1']
 * ```
 */
export function demoClients(
  clients: readonly ServiceClient[],
  resource: string,
): readonly ServiceClient[] {
  return clients.map((client) =>
    client === DEMO_BACKEND ? { ...client, resources: [resource] } : client,
  )
}

// The scope grammar of the authorisation server: <verb>:<noun>, or an OpenID Connect scope.
const SCOPE = /^(?:[a-z][a-z0-9_-]*:[a-z][a-z0-9_.-]*|openid|profile|email|offline_access)$/
const ID = /^[A-Za-z0-9._~-]{1,64}$/

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost'])

/**
 * Why `text` cannot be a redirect URI, or undefined when it can: absolute without a fragment
 * (RFC 6749 §3.1.2); https, or http to a loopback host only (RFC 8252 §7.3, RFC 9700 §2.1), or
 * a native app's private-use scheme in reverse-domain form such as `com.example.app:/cb`
 * (RFC 8252 §7.1); never javascript:, data:, vbscript: or file:. The same rule as
 * @api-blocks/oauth's, which checks it again at startup.
 */
function redirectUriProblem(text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be an absolute URL'
  }
  if (text.includes('#')) return 'must not have a fragment (#)'
  const scheme = url.protocol.toLowerCase()
  if (['javascript:', 'data:', 'vbscript:', 'file:'].includes(scheme)) {
    return `must not use the ${scheme} scheme`
  }
  if (scheme === 'https:') return undefined
  if (scheme === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? undefined
      : 'may use http only for a loopback host (127.0.0.1, [::1], localhost); use https'
  }
  return scheme.includes('.')
    ? undefined
    : 'must use https, loopback http or a reverse-domain private-use scheme (com.example.app:)'
}

const redirectUri = z
  .string()
  .max(2000)
  .superRefine((text, context) => {
    const problem = redirectUriProblem(text)
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem })
  })

const clientSchema = z.strictObject({
  id: z.string().regex(ID, 'must be 1 to 64 of A-Z a-z 0-9 . _ ~ -'),
  name: z.string().min(1).max(100).optional(),
  public: z.boolean().optional(),
  secretHashes: z
    .array(z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url SHA-256 (43 characters)'))
    .min(1)
    .max(4)
    .optional(),
  redirectUris: z.array(redirectUri).max(20).optional(),
  resources: z
    .array(z.url({ protocol: /^https?$/ }).max(2000))
    .max(20)
    .optional(),
  grantTypes: z.array(z.enum(['authorization_code', 'refresh_token', 'client_credentials'])).min(1),
  scopes: z.array(z.string().regex(SCOPE, 'must be <verb>:<noun> or an OpenID Connect scope')),
})

const userSchema = z.strictObject({
  username: z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, 'must be 1 to 64 of A-Z a-z 0-9 . _ @ -'),
  subject: z
    .string()
    .regex(/^[A-Za-z0-9._~:@-]{1,255}$/)
    .optional(),
  passwordHash: z
    .string()
    .refine(isPasswordHash, 'must be a scrypt hash (npm run oauth-secrets -- hash-password)'),
  name: z.string().min(1).max(200).optional(),
  email: z.email().optional(),
  emailVerified: z.boolean().optional(),
})

const configSchema = z.strictObject({
  /** Keep the demo user and clients (default true); false for anything but a demo. */
  demo: z.boolean().optional(),
  clients: z.array(clientSchema).max(1000).optional(),
  users: z.array(userSchema).max(10_000).optional(),
})

/** The users and clients the service starts with. */
export interface Accounts {
  users: readonly ServiceUser[]
  clients: readonly ServiceClient[]
}

/**
 * Parses the OAUTH_CONFIG file's text (JSON; format in docs/service.md). Throws a
 * {@link ConfigError} naming the first problem.
 *
 * @example
 * ```ts
 * parseAccounts('{"demo":false,"clients":[{"id":"billing","grantTypes":["client_credentials"],"scopes":["read:orders"],"secretHashes":["…"]}]}')
 * ```
 */
export function parseAccounts(text: string, source = 'OAUTH_CONFIG'): Accounts {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    throw new ConfigError(`${source} is not valid JSON.`)
  }
  const parsed = configSchema.safeParse(data)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue?.path.join('.') || '(top level)'
    throw new ConfigError(`${source}: ${where}: ${issue?.message ?? 'invalid'}.`)
  }
  const config = parsed.data
  const demo = config.demo ?? true
  const clients: ServiceClient[] = [...(demo ? DEMO_CLIENTS : [])]
  for (const client of config.clients ?? []) {
    if (clients.some((other) => other.id === client.id)) {
      throw new ConfigError(`${source}: the client id "${client.id}" is used twice.`)
    }
    // RFC 6749 §2.1: public or confidential by configuration, never by a missing field.
    if (client.public === true) {
      if (client.secretHashes) {
        throw new ConfigError(
          `${source}: client "${client.id}": a public client has no secretHashes (drop one or the other).`,
        )
      }
      if (client.grantTypes.includes('client_credentials')) {
        throw new ConfigError(
          `${source}: client "${client.id}": a public client cannot use client_credentials.`,
        )
      }
    } else if (!client.secretHashes) {
      throw new ConfigError(
        `${source}: client "${client.id}": needs secretHashes (a confidential client), or "public": true.`,
      )
    }
    if (client.grantTypes.includes('authorization_code') && !client.redirectUris?.length) {
      throw new ConfigError(
        `${source}: client "${client.id}": authorization_code needs redirectUris.`,
      )
    }
    clients.push(stripUndefined(client) as ServiceClient)
  }
  const users: ServiceUser[] = [...(demo ? DEMO_USERS : [])]
  for (const user of config.users ?? []) {
    const subject = user.subject ?? user.username
    if (users.some((other) => other.username === user.username || other.subject === subject)) {
      throw new ConfigError(
        `${source}: the user "${user.username}" (or its subject) is used twice.`,
      )
    }
    users.push({
      username: user.username,
      subject,
      passwordHash: user.passwordHash,
      claims: {
        ...(user.name !== undefined ? { name: user.name } : {}),
        ...(user.email !== undefined ? { email: user.email } : {}),
        ...(user.emailVerified !== undefined ? { email_verified: user.emailVerified } : {}),
      },
    })
  }
  // A token's `sub` is the client's id when the client acts for itself (client credentials):
  // a user with that subject would be taken for the client (and the client for the user).
  for (const user of users) {
    if (clients.some((client) => client.id === user.subject)) {
      throw new ConfigError(
        `${source}: the user "${user.username}" has the subject "${user.subject}", which is a client id.`,
      )
    }
  }
  return { users, clients }
}

/** Reads and parses the file OAUTH_CONFIG names (at most 1 MiB). */
export function loadAccounts(path: string): Accounts {
  let text: string
  try {
    const bytes = readFileSync(path)
    if (bytes.byteLength > 1024 * 1024) throw new ConfigError('OAUTH_CONFIG is over 1 MiB.')
    text = bytes.toString('utf8')
  } catch (error) {
    if (error instanceof ConfigError) throw error
    throw new ConfigError(`OAUTH_CONFIG: cannot read "${path}" (${(error as Error).message}).`)
  }
  return parseAccounts(text)
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}

/** Looks users up by name (the login page) and by subject (ID token claims, introspection). */
export class UserDirectory {
  readonly #byName = new Map<string, ServiceUser>()
  readonly #bySubject = new Map<string, ServiceUser>()

  constructor(users: readonly ServiceUser[]) {
    for (const user of users) {
      this.#byName.set(user.username, user)
      this.#bySubject.set(user.subject, user)
    }
  }

  /** The user who signs in as `username`, if any. */
  byUsername(username: string): ServiceUser | undefined {
    return this.#byName.get(username)
  }

  /** The account behind a token's subject: `username` and the claims of the ID token. */
  account(subject: string): ServiceAccount | undefined {
    const user = this.#bySubject.get(subject)
    if (!user) return undefined
    return { subject: user.subject, username: user.username, claims: { ...user.claims } }
  }
}
