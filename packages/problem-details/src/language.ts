/**
 * Accept-Language negotiation by RFC 4647 §3.4 "Lookup", shared by problem titles and the
 * http block's negotiation.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4647#section-3.4
 * @module
 */

/**
 * The longest Accept-Language value considered; longer values are treated as absent.
 *
 * @example
 * ```ts
 * parseAcceptLanguage('x'.repeat(MAX_ACCEPT_LANGUAGE_LENGTH + 1)) // []
 * ```
 */
export const MAX_ACCEPT_LANGUAGE_LENGTH = 1024
/** The most language ranges read from one Accept-Language value. */
const MAX_RANGES = 32

// RFC 4647 §2.1: language-range = (1*8ALPHA *("-" 1*8alphanum)) / "*"
const LANGUAGE_RANGE = /^(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)$/
// RFC 9110 §12.4.2: weight = OWS ";" OWS "q=" qvalue
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/**
 * One language range of an Accept-Language header with its weight.
 *
 * @example
 * ```ts
 * const range: LanguageRange = { range: 'de-ch', q: 0.9 }
 * ```
 */
export interface LanguageRange {
  range: string
  q: number
}

/**
 * Parses Accept-Language (RFC 9110 §12.5.4) into ranges sorted by weight, highest first;
 * order is kept among equal weights. Malformed members are skipped, never thrown on.
 *
 * @example
 * ```ts
 * parseAcceptLanguage('fr-CH, fr;q=0.9, en;q=0.8, *;q=0.5')
 * // [{ range: 'fr-ch', q: 1 }, { range: 'fr', q: 0.9 }, { range: 'en', q: 0.8 }, { range: '*', q: 0.5 }]
 * ```
 */
export function parseAcceptLanguage(value: string | null | undefined): LanguageRange[] {
  if (!value || value.length > MAX_ACCEPT_LANGUAGE_LENGTH) return []
  const ranges: LanguageRange[] = []
  for (const member of value.split(',', MAX_RANGES)) {
    const [rawRange = '', ...params] = member.split(';')
    const range = rawRange.trim()
    if (!LANGUAGE_RANGE.test(range)) continue
    let q = 1
    let valid = true
    for (const param of params) {
      const [name = '', weight = ''] = param.split('=', 2).map((part) => part.trim())
      if (name.toLowerCase() !== 'q') continue
      if (!QVALUE.test(weight)) valid = false
      else q = Number(weight)
    }
    if (valid) ranges.push({ range: range.toLowerCase(), q })
  }
  // Array.prototype.sort is stable, so equal weights keep the client's order.
  return ranges.sort((a, b) => b.q - a.q)
}

/**
 * Picks the best of `available` language tags for an Accept-Language value by the RFC 4647
 * §3.4 lookup: each range, best first, is tried and then progressively truncated
 * (`de-CH-1996` → `de-CH` → `de`). `*` and no match give `fallback`. Ranges with q=0 exclude.
 *
 * @example
 * ```ts
 * negotiateLanguage('de-CH, en;q=0.5', ['en', 'de']) // 'de'
 * negotiateLanguage('ja', ['en', 'de'], 'en') // 'en'
 * ```
 */
export function negotiateLanguage(
  acceptLanguage: string | null | undefined,
  available: readonly string[],
  fallback?: string,
): string | undefined {
  const byLowerCase = new Map(available.map((tag) => [tag.toLowerCase(), tag]))
  const ranges = parseAcceptLanguage(acceptLanguage)
  const excluded = new Set(ranges.filter((r) => r.q === 0).map((r) => r.range))
  for (const { range, q } of ranges) {
    if (q === 0) continue
    if (range === '*') break
    let candidate = range
    for (;;) {
      const found = byLowerCase.get(candidate)
      if (found !== undefined && !excluded.has(candidate)) return found
      const cut = candidate.lastIndexOf('-')
      if (cut < 0) break
      candidate = candidate.slice(0, cut)
      // RFC 4647 §3.4: a single-letter subtag (x-, an extension) is removed with the next cut.
      if (candidate.at(-2) === '-') candidate = candidate.slice(0, -2)
    }
  }
  return fallback
}
