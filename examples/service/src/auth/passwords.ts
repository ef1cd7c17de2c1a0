// User passwords, stored as scrypt hashes (RFC 7914) in a self-describing text:
// `scrypt$<log2 N>$<r>$<p>$<salt, base64url>$<hash, base64url>`. Slow on purpose: a leaked
// configuration file must not give the passwords away cheaply. Client secrets are not hashed
// here: generated secrets carry 256 bits, so a fast SHA-256 suffices (hashClientSecret of
// @api-blocks/oauth).
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

/** scrypt's cost parameters: N = 2^logN, block size r, parallelism p (RFC 7914 §2). */
export interface ScryptParameters {
  logN: number
  r: number
  p: number
}

/** The parameters new hashes get: OWASP's minimum for scrypt (N = 2^17, r = 8, p = 1). */
export const DEFAULT_SCRYPT: ScryptParameters = { logN: 17, r: 8, p: 1 }

const HASH_BYTES = 32
const SALT_BYTES = 16
// Bounds on what a configured hash may ask for. scrypt needs 128 * N * r bytes per derivation
// (RFC 7914 §2; Node runs the p lanes one after the other), so each of logN <= 20 and r <= 16
// alone would allow 2 GiB: the product is capped at 256 MiB, so a bad configuration file cannot
// make one login cost more (and at most MAX_CONCURRENT of them run at once: PasswordChecker).
const MAX_LOG_N = 20
const MAX_R = 16
const MAX_P = 4
const MAX_MEMORY_BYTES = 256 * 1024 * 1024
const FORMAT = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d)\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{43})$/

interface ParsedHash {
  logN: number
  r: number
  p: number
  salt: Buffer
  hash: Buffer
}

function parse(text: string): ParsedHash | undefined {
  const match = FORMAT.exec(text)
  if (!match) return undefined
  const [logN, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])]
  if (logN < 10 || logN > MAX_LOG_N || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return undefined
  if (128 * 2 ** logN * r > MAX_MEMORY_BYTES) return undefined
  const hash = Buffer.from(match[5] ?? '', 'base64url')
  if (hash.byteLength !== HASH_BYTES) return undefined
  return { logN, r, p, salt: Buffer.from(match[4] ?? '', 'base64url'), hash }
}

/** Whether `text` is a password hash this module can verify (the config file's check). */
export function isPasswordHash(text: string): boolean {
  return parse(text) !== undefined
}

/** Derives an scrypt key (Node's, on libuv's thread pool); injectable in {@link PasswordChecker}. */
export type Deriver = (
  password: string,
  salt: Buffer,
  parameters: ScryptParameters,
) => Promise<Buffer>

const nodeDeriver: Deriver = (password, salt, { logN, r, p }) => derive(password, salt, logN, r, p)

function derive(password: string, salt: Buffer, logN: number, r: number, p: number) {
  const N = 2 ** logN
  return new Promise<Buffer>((resolve, reject) => {
    // On libuv's thread pool (four threads by default, shared with zlib, DNS and file I/O):
    // PasswordChecker bounds how many run at once.
    scrypt(
      password.normalize('NFC'),
      salt,
      HASH_BYTES,
      { N, r, p, maxmem: 128 * N * r * p + 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    )
  })
}

/**
 * Hashes a password for the configuration file (`npm run oauth-secrets -- hash-password`).
 *
 * @example
 * ```ts
 * await hashPassword('lovelace') // 'scrypt$17$8$1$…$…'
 * ```
 */
export async function hashPassword(
  password: string,
  parameters: ScryptParameters = DEFAULT_SCRYPT,
  salt: Buffer = randomBytes(SALT_BYTES),
): Promise<string> {
  const { logN, r, p } = parameters
  const hash = await derive(password, salt, logN, r, p)
  return `scrypt$${logN}$${r}$${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`
}

/**
 * The parameters of the hash an unknown user name is checked against: the costliest of the
 * configured users' (128 * N * r * p), or {@link DEFAULT_SCRYPT} when there is none. An unknown
 * name then costs what a known one does (with users of mixed parameters, what the costliest
 * does: give them all the same).
 *
 * @example
 * ```ts
 * dummyParameters(['scrypt$15$8$1$…$…']) // { logN: 15, r: 8, p: 1 }
 * ```
 */
export function dummyParameters(storedHashes: readonly string[]): ScryptParameters {
  let best: ScryptParameters | undefined
  const cost = ({ logN, r, p }: ScryptParameters) => 2 ** logN * r * p
  for (const text of storedHashes) {
    const parsed = parse(text)
    if (parsed && (best === undefined || cost(parsed) > cost(best))) {
      best = { logN: parsed.logN, r: parsed.r, p: parsed.p }
    }
  }
  return best ?? { ...DEFAULT_SCRYPT }
}

/** {@link PasswordChecker.verify} found every slot and the queue full: answer 503. */
export class PasswordCheckBusyError extends Error {
  constructor() {
    super('Too many sign-ins at once.')
    this.name = 'PasswordCheckBusyError'
  }
}

/** Options of {@link PasswordChecker}. */
export interface PasswordCheckerOptions {
  /** The configured users' stored hashes: they set the unknown-name hash's parameters. */
  storedHashes: readonly string[]
  /** Derivations run at once (default 2: libuv's pool has 4 threads, zlib needs some). */
  maxConcurrent?: number
  /** Checks waiting for a slot (default 8); one more is refused ({@link PasswordCheckBusyError}). */
  maxQueued?: number
  /** Default: Node's scrypt. Tests count concurrent derivations with their own. */
  derive?: Deriver
}

/**
 * Verifies passwords with at most `maxConcurrent` scrypt derivations at once and `maxQueued`
 * waiting: each derivation holds up to 256 MiB and a thread of libuv's pool for a good part of
 * a second, so unbounded, a few sign-in requests would stall compression and file I/O for every
 * other request. A waiting check whose request was aborted is dropped before it derives.
 *
 * @example
 * ```ts
 * const checker = new PasswordChecker({ storedHashes: users.map((user) => user.passwordHash) })
 * if (await checker.verify(user?.passwordHash, form.password, request.signal)) signIn(user)
 * ```
 */
export class PasswordChecker {
  /** The parameters unknown names are checked with ({@link dummyParameters}). */
  readonly dummy: ScryptParameters
  readonly #dummyHash: ParsedHash
  readonly #maxConcurrent: number
  readonly #maxQueued: number
  readonly #derive: Deriver
  readonly #queue: (() => void)[] = []
  #running = 0

  constructor(options: PasswordCheckerOptions) {
    this.dummy = dummyParameters(options.storedHashes)
    this.#dummyHash = {
      ...this.dummy,
      salt: randomBytes(SALT_BYTES),
      hash: randomBytes(HASH_BYTES),
    }
    this.#maxConcurrent = options.maxConcurrent ?? 2
    this.#maxQueued = options.maxQueued ?? 8
    this.#derive = options.derive ?? nodeDeriver
  }

  /**
   * Whether `password` matches `stored` (compared in constant time); `stored` undefined (an
   * unknown user) costs the same work and answers false. Throws
   * {@link PasswordCheckBusyError} when the queue is full, and `signal`'s reason when it aborts
   * while the check waits.
   */
  async verify(
    stored: string | undefined,
    password: string,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const parsed = (stored === undefined ? undefined : parse(stored)) ?? this.#dummyHash
    await this.#acquire(signal)
    try {
      const derived = await this.#derive(password, parsed.salt, parsed)
      const equal =
        derived.byteLength === parsed.hash.byteLength && timingSafeEqual(derived, parsed.hash)
      return equal && parsed !== this.#dummyHash
    } finally {
      this.#release()
    }
  }

  async #acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted()
    if (this.#running < this.#maxConcurrent) {
      this.#running++
      return
    }
    if (this.#queue.length >= this.#maxQueued) throw new PasswordCheckBusyError()
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#queue.indexOf(start)
        if (index >= 0) this.#queue.splice(index, 1)
        reject(signal?.reason)
      }
      // The slot is handed over by #release (#running stays counted).
      const start = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      this.#queue.push(start)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  #release(): void {
    const next = this.#queue.shift()
    if (next) next()
    else this.#running--
  }

  /** Checks running and waiting (for tests of the bound). */
  get load(): { running: number; queued: number } {
    return { running: this.#running, queued: this.#queue.length }
  }
}

/**
 * Whether `password` matches `stored`, with no bound on concurrent checks and the default
 * parameters for an unknown user: for scripts and tests; the login page uses a
 * {@link PasswordChecker}.
 *
 * @example
 * ```ts
 * await verifyPassword(await hashPassword('lovelace'), 'lovelace') // true
 * ```
 */
export async function verifyPassword(
  stored: string | undefined,
  password: string,
): Promise<boolean> {
  return new PasswordChecker({
    storedHashes: stored === undefined ? [] : [stored],
    maxConcurrent: 1,
  }).verify(stored, password)
}
