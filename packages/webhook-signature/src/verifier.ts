/**
 * The receiving side: checks the three Standard Webhooks header fields of a delivery against
 * its raw body, before anything parses it.
 *
 * @module
 */
import type { HeadersInitLike } from '@api-blocks/core'
import { encodeBase64 } from '@api-blocks/core'
import { hmacSha256 } from '@api-blocks/core/crypto'
import { WebhookSignatureError } from './error.ts'
import { checkId, MAX_SIGNATURE_LENGTH, MAX_TIMESTAMP_DIGITS } from './limits.ts'
import type { WebhookSecret } from './secret.ts'
import { keysOf } from './secret.ts'
import type { WebhookSignatureScheme } from './signed-content.ts'
import { signedContent } from './signed-content.ts'

/**
 * Options of {@link createVerifier}.
 *
 * @example
 * ```ts
 * const options: WebhookVerifierOptions = { secrets: [current, previous], toleranceSeconds: 60 }
 * ```
 */
export interface WebhookVerifierOptions {
  /** The secrets a delivery may be signed with (several during a rotation); one may match. */
  secrets: WebhookSecret | readonly WebhookSecret[]
  /** How far, in seconds, the timestamp may be from the clock, either way (default 300). */
  toleranceSeconds?: number
  /** Now, in milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /** Which content is signed (default `'standard'`, see {@link WebhookSignatureScheme}). */
  scheme?: WebhookSignatureScheme
}

/**
 * What a verified delivery carried: dedup on `id`.
 *
 * @example
 * ```ts
 * const { id, timestamp }: VerifiedWebhook = await verifier.verify(headers, body)
 * ```
 */
export interface VerifiedWebhook {
  /** The `webhook-id`. */
  id: string
  /** The `webhook-timestamp`, in Unix seconds. */
  timestamp: number
}

/**
 * Verifies deliveries: keeps the HMAC keys made once.
 *
 * @example
 * ```ts
 * const { id } = await verifier.verify(request.headers, new Uint8Array(await request.arrayBuffer()))
 * ```
 */
export interface WebhookVerifier {
  /**
   * Resolves with the id and timestamp when a `v1` signature of the header matches `body`
   * (its raw bytes; a string counts as its UTF-8) under one of the secrets and the timestamp
   * is within the tolerance; rejects with a {@link WebhookSignatureError} otherwise.
   */
  verify(headers: HeadersInitLike, body: Uint8Array | string): Promise<VerifiedWebhook>
}

const TIMESTAMP = /^[0-9]+$/

/**
 * Reads header fields by their lower-case names from a Headers, a record or a list of pairs;
 * the first matching entry wins. A record's keys are listed once for the three fields, and a
 * key already in lower case is matched without lower-casing it: `Object.entries` three times
 * was a tenth of a 1 KiB verify's CPU profile in `npm run bench -- webhook-signature`
 * (docs/benchmarks.md, issue 15).
 */
function readerOf(headers: HeadersInitLike): (name: string) => unknown {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const fields = headers as { get(name: string): string | null }
    return (name) => fields.get(name)
  }
  if (Array.isArray(headers)) {
    const pairs = headers as readonly (readonly unknown[])[]
    return (name) => {
      for (const pair of pairs) {
        if (typeof pair[0] === 'string' && pair[0].toLowerCase() === name) return pair[1]
      }
      return undefined
    }
  }
  const record = headers as Record<string, unknown>
  const keys = Object.keys(record)
  return (name) => {
    for (const key of keys) {
      if (key === name || key.toLowerCase() === name) return record[key]
    }
    return undefined
  }
}

function required(read: (name: string) => unknown, name: string): string {
  const value = read(name)
  if (value === undefined || value === null || value === '') {
    throw new WebhookSignatureError('HEADER_MISSING', `The ${name} header field is missing`)
  }
  if (typeof value !== 'string') {
    throw new WebhookSignatureError('HEADER_MALFORMED', `The ${name} header field is not text`)
  }
  return value
}

/** The length of a MAC's canonical padded base64 (RFC 4648 §4): 32 bytes, 44 characters. */
const MAC_BASE64_LENGTH = 44

/**
 * The base64 of the field's `v1` signatures; other versions (`v1a`, `v2`) and values that cannot
 * be the canonical base64 of 32 bytes (not 44 characters) are skipped.
 */
function v1Signatures(field: string): string[] {
  const signatures: string[] = []
  for (const entry of field.split(' ')) {
    if (
      entry.length === 3 + MAC_BASE64_LENGTH &&
      entry.charCodeAt(0) === 0x76 && // v
      entry.charCodeAt(1) === 0x31 && // 1
      entry.charCodeAt(2) === 0x2c // ,
    ) {
      signatures.push(entry.slice(3))
    }
  }
  return signatures
}

/**
 * Whether two strings of one length are equal, in time that depends only on the length, never
 * on where they differ. The MAC is compared as its canonical base64, not decoded first: equal
 * texts are exactly equal MACs (one byte string has one canonical encoding), and decoding each
 * received signature (a decode, a re-encode to check it is canonical, a copy) was a fifth of a
 * 1 KiB verify in `npm run bench -- webhook-signature` (docs/benchmarks.md, issue 15).
 */
function equalText(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let index = 0; index < a.length; index += 1) {
    difference |= a.charCodeAt(index) ^ b.charCodeAt(index)
  }
  return difference === 0
}

/**
 * Makes a Standard Webhooks verifier. In order, as the Standard Webhooks libraries do: the three
 * header fields present and within their limits (id at most 256 visible ASCII characters,
 * timestamp 1 to 12 digits, signature at most 4096 characters), the timestamp within
 * `toleranceSeconds` of the clock (exactly at the tolerance passes), then each `v1` signature
 * compared in constant time with the HMAC under each secret.
 *
 * @example
 * ```ts
 * const verifier = createVerifier({ secrets: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
 * const body = new Uint8Array(await request.arrayBuffer())
 * const { id } = await verifier.verify(request.headers, body) // or a WebhookSignatureError
 * ```
 */
export function createVerifier(options: WebhookVerifierOptions): WebhookVerifier {
  const keys = keysOf(options.secrets)
  const scheme = options.scheme ?? 'standard'
  const clock = options.clock ?? Date.now
  const tolerance = options.toleranceSeconds ?? 300
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError('toleranceSeconds is a finite, non-negative number')
  }
  async function verify(headers: HeadersInitLike, body: Uint8Array | string) {
    const read = readerOf(headers)
    const id = required(read, 'webhook-id')
    const timestamp = required(read, 'webhook-timestamp')
    const field = required(read, 'webhook-signature')
    if (!checkId(id)) {
      throw new WebhookSignatureError(
        'HEADER_MALFORMED',
        'The webhook-id header field is not 1 to 256 visible ASCII characters',
      )
    }
    if (timestamp.length > MAX_TIMESTAMP_DIGITS || !TIMESTAMP.test(timestamp)) {
      throw new WebhookSignatureError(
        'HEADER_MALFORMED',
        `The webhook-timestamp header field is not 1 to ${MAX_TIMESTAMP_DIGITS} digits`,
      )
    }
    if (field.length > MAX_SIGNATURE_LENGTH) {
      throw new WebhookSignatureError(
        'HEADER_MALFORMED',
        `The webhook-signature header field is over ${MAX_SIGNATURE_LENGTH} characters`,
      )
    }
    const seconds = Number(timestamp)
    const now = Math.floor(clock() / 1000)
    // The timestamp is checked before the HMAC (the Standard Webhooks order): a replay of an old
    // delivery costs no MAC.
    if (now - seconds > tolerance) {
      throw new WebhookSignatureError('TIMESTAMP_TOO_OLD', 'The webhook timestamp is too old')
    }
    if (seconds - now > tolerance) {
      throw new WebhookSignatureError('TIMESTAMP_TOO_NEW', 'The webhook timestamp is too new')
    }
    const signatures = v1Signatures(field)
    if (signatures.length > 0) {
      const content = signedContent(scheme, id, timestamp, body)
      let matched = false
      for (const key of keys) {
        const expected = encodeBase64(await hmacSha256(key, content))
        // Every candidate is compared in constant time; no early exit on the position of a
        // difference.
        for (const signature of signatures) {
          if (equalText(expected, signature)) matched = true
        }
      }
      if (matched) return { id, timestamp: seconds }
    }
    throw new WebhookSignatureError(
      'SIGNATURE_MISMATCH',
      'No webhook signature matches the body under any secret',
    )
  }
  return {
    verify(headers: HeadersInitLike, body: Uint8Array | string): Promise<VerifiedWebhook> {
      // One way out: a rejected Promise, never a synchronous throw.
      return verify(headers, body)
    },
  }
}
