/**
 * Media types: parsing `Content-Type` and `Accept`, and proactive negotiation of a media type
 * (RFC 9110 §12.5.1) with two fixes over common practice: parameters the offer does not have
 * are tolerated (`application/json;charset=utf-8` matches an `application/json` offer), and
 * structured syntax suffixes (RFC 6839) match when enabled.
 *
 * @module
 */
import { isToken, parseParameters, parseQuality, splitOutsideQuotes } from '../internal/syntax.ts'
import type { Negotiated } from './types.ts'

/**
 * The longest Accept value read; a longer one is treated as absent.
 *
 * @example
 * ```ts
 * negotiateMediaType('x'.repeat(MAX_ACCEPT_LENGTH + 1), ['application/json']) // treated as absent
 * ```
 */
export const MAX_ACCEPT_LENGTH = 4096
/**
 * The most media ranges read from one Accept value.
 *
 * @example
 * ```ts
 * parseAccept(Array(100).fill('text/html').join(',')).length <= MAX_ACCEPT_MEMBERS // true
 * ```
 */
export const MAX_ACCEPT_MEMBERS = 64
/**
 * The longest Content-Type value read; a longer one is treated as absent.
 *
 * @example
 * ```ts
 * parseMediaType('x'.repeat(MAX_CONTENT_TYPE_LENGTH + 1)) // undefined
 * ```
 */
export const MAX_CONTENT_TYPE_LENGTH = 1024

/**
 * A parsed media type (RFC 9110 §8.3.1). Type, subtype and parameter names are lowercase.
 *
 * @example
 * ```ts
 * const media: MediaType | undefined = parseMediaType('application/problem+json; charset=utf-8')
 * ```
 */
export interface MediaType {
  type: string
  subtype: string
  /** The structured syntax suffix (RFC 6839): `json` for `application/vnd.x+json`. */
  suffix: string | undefined
  parameters: Record<string, string>
}

/**
 * One media range of an Accept value with its weight and its position in the header.
 *
 * @example
 * ```ts
 * const ranges: MediaRange[] = parseAccept('text/html, application/json;q=0.9')
 * ```
 */
export interface MediaRange extends MediaType {
  q: number
  index: number
}

function parseMember(
  member: string,
  weighted: boolean,
): { media: MediaType; q: number } | undefined {
  const [essence = '', ...rest] = splitOutsideQuotes(member, ';', 32)
  const slash = essence.indexOf('/')
  if (slash < 0) return undefined
  const type = essence.slice(0, slash).trim().toLowerCase()
  const subtype = essence
    .slice(slash + 1)
    .trim()
    .toLowerCase()
  if (!isToken(type) || !isToken(subtype)) return undefined
  const parameters = parseParameters(rest)
  if (parameters === undefined) return undefined
  const params: Record<string, string> = {}
  let q = 1
  for (const [name, value] of parameters) {
    // RFC 9110 §12.5.1: in Accept the "q" parameter is the weight; what follows it is not part
    // of the media range, so it is ignored. In a Content-Type "q" is an ordinary parameter.
    if (weighted && name === 'q') {
      const weight = parseQuality(value)
      if (weight === undefined) return undefined
      q = weight
      break
    }
    params[name] = value
  }
  const plus = subtype.lastIndexOf('+')
  const suffix = plus > 0 && plus < subtype.length - 1 ? subtype.slice(plus + 1) : undefined
  return { media: { type, subtype, suffix, parameters: params }, q }
}

/**
 * Parses a media type such as a `Content-Type` value (RFC 9110 §8.3.1). Returns `undefined`
 * for anything malformed, a wildcard, or a value over {@link MAX_CONTENT_TYPE_LENGTH}.
 * Never throws.
 *
 * @example
 * ```ts
 * parseMediaType('application/vnd.api+json; charset=UTF-8')
 * // { type: 'application', subtype: 'vnd.api+json', suffix: 'json', parameters: { charset: 'UTF-8' } }
 * ```
 */
export function parseMediaType(value: string | null | undefined): MediaType | undefined {
  if (!value || value.length > MAX_CONTENT_TYPE_LENGTH) return undefined
  const media = parseMember(value, false)?.media
  if (media === undefined || media.type === '*' || media.subtype === '*') return undefined
  return media
}

/**
 * Parses an Accept value (RFC 9110 §12.5.1) into media ranges, in header order. Malformed
 * members are skipped; a value over {@link MAX_ACCEPT_LENGTH} gives `[]`. Never throws.
 *
 * @example
 * ```ts
 * parseAccept('text/html, application/json;q=0.5').map((r) => [r.subtype, r.q])
 * // [['html', 1], ['json', 0.5]]
 * ```
 */
export function parseAccept(value: string | null | undefined): MediaRange[] {
  if (!value || value.length > MAX_ACCEPT_LENGTH) return []
  const ranges: MediaRange[] = []
  for (const member of splitOutsideQuotes(value, ',', MAX_ACCEPT_MEMBERS)) {
    const parsed = parseMember(member, true)
    if (parsed === undefined) continue
    const { media, q } = parsed
    // RFC 9110 §12.5.1: media-range = "*/*" / ( type "/*" ) / ( type "/" subtype )
    if (media.type === '*' && media.subtype !== '*') continue
    ranges.push({ ...media, q, index: ranges.length })
  }
  return ranges
}

// Accept values and offers repeat from request to request (browsers send a handful of fixed
// strings), so their parsed forms are kept in two small caches. Each is bounded and emptied
// when full, so hostile unique values cost memory of at most CACHE_SIZE entries.
const CACHE_SIZE = 128
const rangeCache = new Map<string, readonly MediaRange[]>()
const offerCache = new Map<string, MediaType | undefined>()

function cached<T>(cache: Map<string, T>, key: string, compute: (key: string) => T): T {
  if (cache.has(key)) return cache.get(key) as T
  const value = compute(key)
  if (cache.size >= CACHE_SIZE) cache.clear()
  cache.set(key, value)
  return value
}

function rangesOf(accept: string | null | undefined): readonly MediaRange[] {
  if (!accept || accept.length > MAX_ACCEPT_LENGTH) return []
  return cached(rangeCache, accept, parseAccept)
}

function offerOf(offer: string): MediaType | undefined {
  return cached(offerCache, offer, parseMediaType)
}

/**
 * Options of {@link negotiateMediaType} and {@link matchesMediaType}.
 *
 * @example
 * ```ts
 * const options: MediaTypeOptions = { matchSuffix: true }
 * ```
 */
export interface MediaTypeOptions {
  /**
   * Match structured syntax suffixes (RFC 6839 §2): a range `application/vnd.x+json`
   * matches an `application/json` offer and `application/json` matches an
   * `application/vnd.x+json` offer, less specifically than an exact match. Default `false`.
   */
  matchSuffix?: boolean
}

// How specific a match is: RFC 9110 §12.5.1 "the most specific reference has precedence".
const Level = { Any: 0, Type: 1, Suffix: 2, Exact: 3 } as const
type Level = (typeof Level)[keyof typeof Level]

function parameterMatches(range: MediaType, offer: MediaType): number | undefined {
  let matched = 0
  for (const [name, value] of Object.entries(range.parameters)) {
    const offered = offer.parameters[name]
    // A parameter the offer does not mention is tolerated (the offer does not constrain it).
    if (offered === undefined) continue
    const equal =
      name === 'charset' ? offered.toLowerCase() === value.toLowerCase() : offered === value
    if (!equal) return undefined
    matched++
  }
  return matched
}

function matchLevel(
  range: MediaType,
  offer: MediaType,
  options: MediaTypeOptions,
): Level | undefined {
  if (range.type === '*') return Level.Any
  if (range.type !== offer.type) return undefined
  if (range.subtype === '*') return Level.Type
  if (range.subtype === offer.subtype) return Level.Exact
  if (options.matchSuffix === true) {
    if (range.suffix !== undefined && range.suffix === offer.subtype) return Level.Suffix
    if (offer.suffix !== undefined && offer.suffix === range.subtype) return Level.Suffix
  }
  return undefined
}

interface Score {
  q: number
  level: number
  params: number
  index: number
}

function bestRange(
  ranges: readonly MediaRange[],
  offer: MediaType,
  options: MediaTypeOptions,
): Score | undefined {
  let best: Score | undefined
  for (const range of ranges) {
    const level = matchLevel(range, offer, options)
    if (level === undefined) continue
    const params = parameterMatches(range, offer)
    if (params === undefined) continue
    if (
      best === undefined ||
      level > best.level ||
      (level === best.level && params > best.params)
    ) {
      best = { q: range.q, level, params, index: range.index }
    }
  }
  return best
}

/**
 * The weight an Accept value gives one media type: the q of the most specific matching range
 * (RFC 9110 §12.5.1), 0 when no range matches, 1 when Accept is absent or unusable.
 *
 * @example
 * ```ts
 * weighMediaType('text/*;q=0.3, text/plain;q=0.7', 'text/plain') // 0.7
 * weighMediaType('text/*;q=0.3, text/plain;q=0.7', 'image/png') // 0
 * ```
 */
export function weighMediaType(
  accept: string | null | undefined,
  offer: string,
  options: MediaTypeOptions = {},
): number {
  const ranges = rangesOf(accept)
  if (ranges.length === 0) return 1
  const media = offerOf(offer)
  if (media === undefined) return 0
  return bestRange(ranges, media, options)?.q ?? 0
}

// Higher weight, then the more specific match, then the range the client listed first. An
// offer that only ties keeps the earlier offer: the server's order decides last.
function beats(a: Score, b: Score): boolean {
  if (a.q !== b.q) return a.q > b.q
  if (a.level !== b.level) return a.level > b.level
  if (a.params !== b.params) return a.params > b.params
  return a.index < b.index
}

/**
 * Picks the best of `offers` (media types the server can produce, in its order of
 * preference) for an Accept value. Each offer takes the weight of the most specific range
 * that matches it (RFC 9110 §12.5.1); `q=0` excludes. Ties go to the more specific match,
 * then to the range listed first by the client, then to the server's order.
 *
 * A missing, empty, oversized or entirely malformed Accept means "anything" (§12.5.1: no
 * Accept field implies any media type), so the first offer wins. Never throws.
 *
 * @example
 * ```ts
 * negotiateMediaType('application/json;charset=utf-8, text/html;q=0.5', ['text/html', 'application/json'])
 * // { choice: 'application/json', vary: ['Accept'] }
 * negotiateMediaType('application/vnd.acme+json', ['application/json'], { matchSuffix: true })
 * // { choice: 'application/json', vary: ['Accept'] }
 * ```
 */
export function negotiateMediaType(
  accept: string | null | undefined,
  offers: readonly string[],
  options: MediaTypeOptions = {},
): Negotiated<string> {
  const vary = ['Accept']
  const ranges = rangesOf(accept)
  if (ranges.length === 0) return { choice: offers[0], vary }
  let choice: string | undefined
  let best: Score | undefined
  for (const offer of offers) {
    const media = offerOf(offer)
    if (media === undefined) continue
    const score = bestRange(ranges, media, options)
    if (score === undefined || score.q === 0) continue
    if (best === undefined || beats(score, best)) {
      best = score
      choice = offer
    }
  }
  return { choice, vary }
}

/**
 * Whether a media type (a request's Content-Type) is one of `accepted`, ignoring parameters
 * the accepted entry does not name. Accepted entries may be `type/*` or, with `matchSuffix`,
 * match by structured suffix (`application/json` accepts `application/merge-patch+json`).
 * Also accepts `*\/*+json`-style entries written as `application/*+json`.
 *
 * @example
 * ```ts
 * matchesMediaType('application/json; charset=utf-8', ['application/json']) // true
 * matchesMediaType('text/plain', ['application/json']) // false
 * ```
 */
export function matchesMediaType(
  value: string | null | undefined,
  accepted: readonly string[],
  options: MediaTypeOptions = {},
): boolean {
  const media = parseMediaType(value)
  if (media === undefined) return false
  for (const entry of accepted) {
    // `type/*+suffix` names every subtype with that structured suffix.
    const suffixWildcard = /^([^/]+)\/\*\+([^/;]+)$/.exec(entry.trim().toLowerCase())
    if (suffixWildcard !== null) {
      if (media.type === suffixWildcard[1] && media.suffix === suffixWildcard[2]) return true
      continue
    }
    const range = parseAccept(entry)[0]
    if (range === undefined) continue
    const level = matchLevel(range, media, options)
    if (level !== undefined && parameterMatches(range, media) !== undefined) return true
  }
  return false
}
