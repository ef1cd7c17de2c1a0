// Failed sign-ins counted per user name, with an exponential back-off: the per-address budget
// of POST /login (app.ts) does not stop a guesser who spreads over many addresses. Names that
// do not exist are counted like the others, so a lock says nothing about which names exist.

/** Options of {@link LoginThrottle}. */
export interface LoginThrottleOptions {
  /** Failures allowed before the first lock (default 5). */
  freeFailures?: number
  /** The longest lock, in seconds (default 900: 15 minutes). */
  maxLockSeconds?: number
  /** Names tracked at most; past it the least recently failed go (default 10,000). */
  maxEntries?: number
  /** ms since the epoch. */
  clock?: () => number
}

interface Entry {
  failures: number
  /** ms since the epoch; 0 when not locked. */
  lockedUntil: number
  lastFailure: number
}

/**
 * After `freeFailures` failed sign-ins for a name, each further failure locks the name for
 * 2^(failures - freeFailures) seconds, at most `maxLockSeconds` (OWASP Authentication Cheat
 * Sheet, "Account lockout": a growing delay, not a permanent lock a stranger could set off).
 * A success forgets the name; so does a quiet period of `maxLockSeconds` after its last lock ran
 * out. Bounded: an attacker who fills it with fresh names pushes out the oldest entries.
 *
 * @example
 * ```ts
 * const throttle = new LoginThrottle()
 * if (throttle.retryAfter('ada') !== undefined) return tooManyAttempts()
 * ok ? throttle.succeeded('ada') : throttle.failed('ada')
 * ```
 */
export class LoginThrottle {
  readonly #entries = new Map<string, Entry>()
  readonly #free: number
  readonly #maxLockMs: number
  readonly #max: number
  readonly #clock: () => number

  constructor(options: LoginThrottleOptions = {}) {
    this.#free = options.freeFailures ?? 5
    this.#maxLockMs = (options.maxLockSeconds ?? 900) * 1000
    this.#max = options.maxEntries ?? 10_000
    this.#clock = options.clock ?? Date.now
  }

  #live(username: string): Entry | undefined {
    const entry = this.#entries.get(username)
    if (
      entry &&
      Math.max(entry.lockedUntil, entry.lastFailure) + this.#maxLockMs <= this.#clock()
    ) {
      this.#entries.delete(username)
      return undefined
    }
    return entry
  }

  /** Seconds until `username` may try again, or undefined when it may now. */
  retryAfter(username: string): number | undefined {
    const entry = this.#live(username)
    const now = this.#clock()
    if (!entry || entry.lockedUntil <= now) return undefined
    return Math.ceil((entry.lockedUntil - now) / 1000)
  }

  /** Counts a failed sign-in for `username` (known or not). */
  failed(username: string): void {
    const now = this.#clock()
    const entry = this.#live(username) ?? { failures: 0, lockedUntil: 0, lastFailure: now }
    entry.failures++
    entry.lastFailure = now
    if (entry.failures >= this.#free) {
      const exponent = Math.min(entry.failures - this.#free, 30)
      entry.lockedUntil = now + Math.min(2 ** exponent * 1000, this.#maxLockMs)
    }
    // Re-inserted last: the map's order is then the order of the latest failures.
    this.#entries.delete(username)
    this.#entries.set(username, entry)
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.#max) break
      this.#entries.delete(key)
    }
  }

  /** Forgets the failures of `username` (it signed in). */
  succeeded(username: string): void {
    this.#entries.delete(username)
  }

  /** Names tracked (for tests of the bound). */
  get size(): number {
    return this.#entries.size
  }
}
