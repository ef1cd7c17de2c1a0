/**
 * Published Standard Webhooks test vectors, as data. Source: the test suites of the
 * standard-webhooks libraries (github.com/standard-webhooks/standard-webhooks, `libraries/`):
 * SW-1 is in the JavaScript, Python, Go, Ruby, PHP, C# and Java tests (and the Svix server's
 * `worker.rs` `test_generate_msg_headers_with_signing_key`); SW-2 is the Rust `lib.rs`
 * `test_sign`. The negative and multi-signature cases come from the same suites. The
 * `derived` vectors were computed with node:crypto and Python's `hmac` from SW-1's key and are
 * not published anywhere.
 */

export interface SignatureVector {
  name: string
  secret: string
  id: string
  timestamp: number
  /** The body as text (UTF-8), or as hex when `bodyHex` is set. */
  body: string
  bodyHex?: boolean
  scheme: 'standard' | 'timestamp-body'
  signature: string
}

const SW1 = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
} as const

export const publishedVectors: readonly SignatureVector[] = [
  {
    name: 'SW-1 (standard-webhooks JS, Python, Go, Ruby, PHP, C#, Java tests)',
    ...SW1,
    body: '{"test": 2432232314}',
    scheme: 'standard',
    signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  },
  {
    name: 'SW-2 (standard-webhooks Rust lib.rs test_sign)',
    secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    id: 'msg_27UH4WbU6Z5A5EzD8u03UvzRbpk',
    timestamp: 1649367553,
    body: '{"email":"test@example.com","username":"test_user"}',
    scheme: 'standard',
    signature: 'v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=',
  },
]

export const derivedVectors: readonly SignatureVector[] = [
  {
    name: 'timestamp-body variant (docs/spec.md §5 rule 14) over SW-1',
    ...SW1,
    body: '{"test": 2432232314}',
    scheme: 'timestamp-body',
    signature: 'v1,6WIDxt6FDn3B/edInvYUC0AtOlpk/iUM0u75gw+sHO8=',
  },
  {
    name: 'empty body',
    ...SW1,
    body: '',
    scheme: 'standard',
    signature: 'v1,v48jdbgvh29KJz2Qc+ghw8G6vG3nAKnujWBg8oM/62A=',
  },
  {
    name: 'UTF-8 body',
    ...SW1,
    body: '{"emoji":"😀","txt":"héllo"}',
    scheme: 'standard',
    signature: 'v1,g7xCKYgSpEynLoIm7lTD/dXvaIHwiWfhfifk4csf9AY=',
  },
  {
    name: 'body bytes that are not UTF-8 (7b 22 61 22 3a 22 ff 22 7d), signed as they are',
    ...SW1,
    body: '7b2261223a22ff227d',
    bodyHex: true,
    scheme: 'standard',
    signature: 'v1,SC6LvynCsqN55jtvuHrdKlxw6bTET3vK7uhObnaO7GU=',
  },
]

/** Wrong signatures from the same suites (Python, JS/PHP, Rust), and partial headers. */
export const wrongSignatures: readonly string[] = [
  'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=',
  'v1,dawfeoifkpqwoekfpqoekf',
  'v1,R3PTzyfHASBKHH98a7yexTwaJ4yNIcGhFQc1yuN+BPU=',
  'v1,',
  'v1,g0hM9',
]

/** The multi-signature header of the suites, with `<valid>` third: it MUST pass. */
export const multiSignatureTemplate =
  'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= <valid> v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc='

/** Timestamps the PHP suite refuses to sign, and `hello` that every verifier refuses. */
export const malformedTimestamps: readonly string[] = [
  '161426533.0',
  'invalid timestamp',
  '-161426533',
  'hello',
]

/** The body of a vector: its text, or its bytes when given as hex. */
export function bodyOf(vector: SignatureVector): Uint8Array | string {
  if (vector.bodyHex !== true) return vector.body
  const bytes = new Uint8Array(vector.body.length / 2)
  for (let index = 0; index < bytes.length; index++) {
    bytes[index] = Number.parseInt(vector.body.slice(index * 2, index * 2 + 2), 16)
  }
  return bytes
}
