// User passwords, stored as scrypt hashes (RFC 7914) in a self-describing text:
// `scrypt$<log2 N>$<r>$<p>$<salt, base64url>$<hash, base64url>`. Slow on purpose: a leaked
// configuration file must not give the passwords away cheaply. Client secrets are not hashed
// here: generated secrets carry 256 bits, so a fast SHA-256 suffices (hashClientSecret of
// @api-blocks/oauth).
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

/** The parameters new hashes get: OWASP's minimum for scrypt (N = 2^17, r = 8, p = 1). */
const DEFAULT_SCRYPT = { logN: 17, r: 8, p: 1 } as const

const HASH_BYTES = 32
const SALT_BYTES = 16
// Bounds on what a configured hash may ask for, so a bad configuration file cannot make every
// login cost a gigabyte (scrypt needs 128 * N * r bytes).
const MAX_LOG_N = 20
const MAX_R = 16
const MAX_P = 4
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
  const hash = Buffer.from(match[5] ?? '', 'base64url')
  if (hash.byteLength !== HASH_BYTES) return undefined
  return { logN, r, p, salt: Buffer.from(match[4] ?? '', 'base64url'), hash }
}

/** Whether `text` is a password hash this module can verify (the config file's check). */
export function isPasswordHash(text: string): boolean {
  return parse(text) !== undefined
}

function derive(password: string, salt: Buffer, logN: number, r: number, p: number) {
  const N = 2 ** logN
  return new Promise<Buffer>((resolve, reject) => {
    // libuv's thread pool runs at most four of these at once, which bounds their memory.
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
  parameters: { logN: number; r: number; p: number } = DEFAULT_SCRYPT,
  salt: Buffer = randomBytes(SALT_BYTES),
): Promise<string> {
  const { logN, r, p } = parameters
  const hash = await derive(password, salt, logN, r, p)
  return `scrypt$${logN}$${r}$${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`
}

// Checked against when the user is unknown, so that an unknown name costs as long as a wrong
// password and the answer time does not tell which names exist.
const DUMMY = parse(
  'scrypt$15$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
) as ParsedHash

/**
 * Whether `password` matches `stored` (compared in constant time). `stored` undefined (an
 * unknown user) costs the same work and answers false.
 *
 * @example
 * ```ts
 * if (await verifyPassword(user?.passwordHash, form.password)) signIn(user)
 * ```
 */
export async function verifyPassword(
  stored: string | undefined,
  password: string,
): Promise<boolean> {
  const parsed = (stored === undefined ? undefined : parse(stored)) ?? DUMMY
  const derived = await derive(password, parsed.salt, parsed.logN, parsed.r, parsed.p)
  const equal = timingSafeEqual(derived, parsed.hash)
  return equal && parsed !== DUMMY
}
