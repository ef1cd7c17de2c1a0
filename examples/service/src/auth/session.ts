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
  /** The most sessions kept; past it the oldest go (default 10,000). */
  maxSessions?: number
  clock?: () => number
  random?: (bytes: number) => Uint8Array
}

const digest = (id: string) => createHash('sha256').update(id).digest('base64url')

/** Sessions in memory, bounded in number and time. */
export class SessionStore {
  readonly #sessions = new Map<string, Session>()
  readonly #ttlMs: number
  readonly #max: number
  readonly #clock: () => number
  readonly #random: (bytes: number) => Uint8Array
  /** The cookie's name: `__Host-` on https, so no subdomain or path can set or shadow it. */
  readonly cookieName: string
  readonly #attributes: string

  constructor(options: SessionStoreOptions) {
    this.#ttlMs = (options.ttlSeconds ?? 3600) * 1000
    this.#max = options.maxSessions ?? 10_000
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
    const session = this.#sessions.get(key)
    if (!session) return undefined
    if (session.expiresAt <= this.#clock()) {
      this.#sessions.delete(key)
      return undefined
    }
    return session
  }

  /**
   * Starts a new session (a new id, a new CSRF token) and answers the Set-Cookie field value.
   * Called on the first page, and again when the user signs in, so an id planted before the
   * login is worth nothing after it (session fixation).
   */
  start(
    request: Request,
    user?: { subject: string; authTime: number; signedInFor?: string },
  ): { session: Session; setCookie: string } {
    const previous = readCookie(request.headers.get('cookie'), this.cookieName)
    if (previous !== undefined) this.#sessions.delete(digest(previous))
    this.#sweep()
    const id = this.#token()
    const session: Session = {
      csrf: this.#token(),
      ...(user ? { subject: user.subject, authTime: user.authTime } : {}),
      ...(user?.signedInFor !== undefined ? { signedInFor: user.signedInFor } : {}),
      expiresAt: this.#clock() + this.#ttlMs,
    }
    this.#sessions.set(digest(id), session)
    return { session, setCookie: `${this.cookieName}=${id}; ${this.#attributes}` }
  }

  /** Ends the session the request names. */
  end(request: Request): void {
    const id = readCookie(request.headers.get('cookie'), this.cookieName)
    if (id !== undefined) this.#sessions.delete(digest(id))
  }

  /** Expired sessions go; past the bound, the oldest (the map keeps insertion order). */
  #sweep(): void {
    const now = this.#clock()
    for (const [key, session] of this.#sessions) {
      if (this.#sessions.size < this.#max && session.expiresAt > now) break
      this.#sessions.delete(key)
    }
  }

  /** How many sessions are kept (for tests of the bound). */
  get size(): number {
    return this.#sessions.size
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
