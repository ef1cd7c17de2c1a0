// The browser session of the login and consent pages: a random id in a cookie, the state on the
// server in a bounded map (one instance's memory: see docs/service.md, "OAuth"). The id is
// stored hashed, so the map holds nothing a cookie could be made from. Each session carries a
// CSRF token that its forms echo (OWASP's synchroniser-token pattern).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** What the server knows about one browser. */
export interface Session {
  /** The per-session CSRF token, put in every form and compared on every POST. */
  readonly csrf: string
  /** The signed-in user, once the login succeeded. */
  readonly subject?: string
  /** When the user signed in, seconds since the epoch (the ID token's auth_time). */
  readonly authTime?: number
  /**
   * The interaction the user signed in for: that sign-in is the fresh one `prompt=login` and
   * `max_age` ask of that interaction (OpenID Connect Core §3.1.2.1).
   */
  readonly signedInFor?: string
  /** ms since the epoch. */
  readonly expiresAt: number
}

/** Options of {@link SessionStore}. */
export interface SessionStoreOptions {
  /** Whether the cookie is `Secure` (the public URL is https). */
  secure: boolean
  /** How long a session lives, in seconds (default 1 hour); the cookie's Max-Age. */
  ttlSeconds?: number
  /**
   * The most sessions kept (default 10,000); past it the oldest go, those not signed in first,
   * so a flood of fresh login pages cannot push out the sessions of signed-in users.
   */
  maxSessions?: number
  /**
   * The most sessions not signed in per client address (default 20); past it the address's
   * oldest goes. Signed-in sessions are not counted.
   */
  maxAnonymousPerAddress?: number
  clock?: () => number
  random?: (bytes: number) => Uint8Array
}

const digest = (id: string) => createHash('sha256').update(id).digest('base64url')

/** Sessions in memory, bounded in number and time. */
export class SessionStore {
  // Two maps, each in insertion order (oldest first): sessions not signed in, and signed in.
  readonly #anonymous = new Map<string, Session>()
  readonly #signedIn = new Map<string, Session>()
  /** The address each anonymous session was started from, and each address's sessions. */
  readonly #addressOf = new Map<string, string>()
  readonly #byAddress = new Map<string, string[]>()
  readonly #ttlMs: number
  readonly #max: number
  readonly #maxPerAddress: number
  readonly #clock: () => number
  readonly #random: (bytes: number) => Uint8Array
  /** The cookie's name: `__Host-` on https, so no subdomain or path can set or shadow it. */
  readonly cookieName: string
  readonly #attributes: string

  constructor(options: SessionStoreOptions) {
    this.#ttlMs = (options.ttlSeconds ?? 3600) * 1000
    this.#max = options.maxSessions ?? 10_000
    this.#maxPerAddress = options.maxAnonymousPerAddress ?? 20
    this.#clock = options.clock ?? Date.now
    this.#random = options.random ?? ((bytes) => randomBytes(bytes))
    this.cookieName = options.secure ? '__Host-session' : 'session'
    this.#attributes = `Path=/; Max-Age=${Math.floor(this.#ttlMs / 1000)}; HttpOnly; SameSite=Lax${options.secure ? '; Secure' : ''}`
  }

  #token(): string {
    return Buffer.from(this.#random(32)).toString('base64url')
  }

  /** The session the request's cookie names, if it is live. */
  find(request: Request): Session | undefined {
    const id = readCookie(request.headers.get('cookie'), this.cookieName)
    if (id === undefined || id.length > 100) return undefined
    const key = digest(id)
    const session = this.#anonymous.get(key) ?? this.#signedIn.get(key)
    if (!session) return undefined
    if (session.expiresAt <= this.#clock()) {
      this.#delete(key)
      return undefined
    }
    return session
  }

  /**
   * Starts a new session (a new id, a new CSRF token) and answers the Set-Cookie field value.
   * Called on the first page, and again when the user signs in, so an id planted before the
   * login is worth nothing after it (session fixation). `address` (the client's, as the rate
   * limit keys it) bounds the sessions not signed in that one address holds.
   */
  start(
    request: Request,
    user?: { subject: string; authTime: number; signedInFor?: string },
    address?: string,
  ): { session: Session; setCookie: string } {
    const previous = readCookie(request.headers.get('cookie'), this.cookieName)
    if (previous !== undefined) this.#delete(digest(previous))
    this.#sweep()
    const id = this.#token()
    const key = digest(id)
    const session: Session = {
      csrf: this.#token(),
      ...(user ? { subject: user.subject, authTime: user.authTime } : {}),
      ...(user?.signedInFor !== undefined ? { signedInFor: user.signedInFor } : {}),
      expiresAt: this.#clock() + this.#ttlMs,
    }
    if (user) {
      this.#signedIn.set(key, session)
    } else {
      this.#anonymous.set(key, session)
      if (address !== undefined) {
        const keys = this.#byAddress.get(address) ?? []
        keys.push(key)
        this.#byAddress.set(address, keys)
        this.#addressOf.set(key, address)
        while (keys.length > this.#maxPerAddress) this.#delete(keys[0] as string)
      }
    }
    return { session, setCookie: `${this.cookieName}=${id}; ${this.#attributes}` }
  }

  /** Ends the session the request names. */
  end(request: Request): void {
    const id = readCookie(request.headers.get('cookie'), this.cookieName)
    if (id !== undefined) this.#delete(digest(id))
  }

  #delete(key: string): void {
    this.#signedIn.delete(key)
    if (!this.#anonymous.delete(key)) return
    const address = this.#addressOf.get(key)
    if (address === undefined) return
    this.#addressOf.delete(key)
    const keys = this.#byAddress.get(address) ?? []
    const index = keys.indexOf(key)
    if (index >= 0) keys.splice(index, 1)
    if (keys.length === 0) this.#byAddress.delete(address)
  }

  /**
   * Expired sessions go (the oldest of each map first: one lifetime for all); past the bound,
   * the oldest not signed in, and only when there is none the oldest signed in.
   */
  #sweep(): void {
    const now = this.#clock()
    for (const map of [this.#anonymous, this.#signedIn]) {
      for (const [key, session] of map) {
        if (session.expiresAt > now) break
        this.#delete(key)
      }
    }
    while (this.size >= this.#max) {
      const oldest = this.#anonymous.keys().next().value ?? this.#signedIn.keys().next().value
      if (oldest === undefined) break
      this.#delete(oldest)
    }
  }

  /** How many sessions are kept (for tests of the bound). */
  get size(): number {
    return this.#anonymous.size + this.#signedIn.size
  }
}

/** Whether the form's CSRF field is the session's token, compared in constant time. */
export function csrfMatches(session: Session, field: string | null): boolean {
  if (field === null) return false
  const a = Buffer.from(session.csrf)
  const b = Buffer.from(field)
  return a.byteLength === b.byteLength && timingSafeEqual(a, b)
}

/** One cookie's value from a Cookie header (RFC 6265 §5.4), or undefined. */
export function readCookie(header: string | null, name: string): string | undefined {
  if (header === null) return undefined
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=')
    if (equals < 0) continue
    if (pair.slice(0, equals).trim() === name) return pair.slice(equals + 1).trim()
  }
  return undefined
}
