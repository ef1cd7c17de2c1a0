/**
 * Accept-Encoding (RFC 9110 §12.5.3): parsing and proactive negotiation of a content coding.
 *
 * @module
 */
import { isToken, parseParameters, parseQuality, splitOutsideQuotes } from '../internal/syntax.ts'
import type { Negotiated } from './types.ts'

/**
 * The longest Accept-Encoding value read; a longer one is treated as absent.
 *
 * @example
 * ```ts
 * negotiateEncoding('x'.repeat(MAX_ACCEPT_ENCODING_LENGTH + 1), ['gzip']) // treated as absent: identity
 * ```
 */
export const MAX_ACCEPT_ENCODING_LENGTH = 1024
/** The most codings read from one Accept-Encoding value. */
const MAX_CODINGS = 32

/**
 * One coding of an Accept-Encoding value with its weight. Codings are lowercase.
 *
 * @example
 * ```ts
 * const coding: CodingRange = { coding: 'gzip', q: 0.8 }
 * ```
 */
export interface CodingRange {
  coding: string
  q: number
}

// RFC 9110 §8.4.1.3 and §8.4.1.1: x-gzip and x-compress are aliases recipients SHOULD accept.
const ALIASES: Record<string, string> = { 'x-gzip': 'gzip', 'x-compress': 'compress' }

/**
 * Parses an Accept-Encoding value into codings, in header order, with aliases folded
 * (`x-gzip` → `gzip`). Malformed members are skipped; a value over
 * {@link MAX_ACCEPT_ENCODING_LENGTH} gives `undefined` (treated as absent). Never throws.
 *
 * @example
 * ```ts
 * parseAcceptEncoding('gzip, br;q=0.8, *;q=0') // [{coding:'gzip',q:1},{coding:'br',q:0.8},{coding:'*',q:0}]
 * ```
 */
export function parseAcceptEncoding(value: string | null | undefined): CodingRange[] | undefined {
  if (value === null || value === undefined || value.length > MAX_ACCEPT_ENCODING_LENGTH) {
    return undefined
  }
  const codings: CodingRange[] = []
  for (const member of splitOutsideQuotes(value, ',', MAX_CODINGS)) {
    // RFC 9110 §12.5.3: codings = content-coding / "identity" / "*", then an optional weight
    const [name = '', ...rest] = splitOutsideQuotes(member, ';', 8)
    const lower = name.toLowerCase()
    if (!isToken(lower)) continue
    let q = 1
    const parameters = parseParameters(rest)
    if (parameters === undefined) continue
    const weight = parameters.find(([key]) => key === 'q')
    if (weight !== undefined) {
      const parsed = parseQuality(weight[1])
      if (parsed === undefined) continue
      q = parsed
    }
    codings.push({ coding: ALIASES[lower] ?? lower, q })
  }
  return codings
}

/**
 * Picks a content coding from `available` (the codings the server can produce, in its order
 * of preference; `identity` is always available and is added last unless listed).
 *
 * - No Accept-Encoding (or an oversized one): `identity`. RFC 9110 §12.5.3 allows any coding
 *   then; sending none is the choice every proxy and client can read.
 * - An empty value: only `identity` (§12.5.3).
 * - `identity` is acceptable unless excluded by `identity;q=0`, or by `*;q=0` without an
 *   entry for `identity` (§12.5.3). When not listed it takes the lowest weight the client
 *   gave a coding, so `gzip;q=0.5` still prefers gzip (as jshttp/negotiator does).
 * - `*` gives its weight to every coding not listed; `q=0` excludes.
 * - Ties go to the server's order. `choice` is `undefined` when nothing is acceptable; the
 *   server may then answer 406 or, as most do, send `identity` anyway.
 *
 * @example
 * ```ts
 * negotiateEncoding('gzip, br', ['br', 'gzip']) // { choice: 'br', vary: ['Accept-Encoding'] }
 * negotiateEncoding('identity;q=0', []) // { choice: undefined, vary: ['Accept-Encoding'] }
 * ```
 */
export function negotiateEncoding(
  acceptEncoding: string | null | undefined,
  available: readonly string[],
): Negotiated<string> {
  const vary = ['Accept-Encoding']
  const offers = available.map((coding) => coding.toLowerCase())
  if (!offers.includes('identity')) offers.push('identity')
  const codings = parseAcceptEncoding(acceptEncoding)
  if (codings === undefined) return { choice: 'identity', vary }
  const weights = new Map<string, number>()
  for (const { coding, q } of codings) if (!weights.has(coding)) weights.set(coding, q)
  const wildcard = weights.get('*')
  const positive = codings.filter((c) => c.q > 0).map((c) => c.q)
  const identityDefault = positive.length > 0 ? Math.min(...positive) : 1

  let choice: string | undefined
  let best = 0
  for (const offer of offers) {
    let q = weights.get(offer) ?? wildcard
    if (q === undefined) q = offer === 'identity' ? identityDefault : 0
    if (q > best) {
      best = q
      choice = available.find((coding) => coding.toLowerCase() === offer) ?? offer
    }
  }
  return { choice, vary }
}
