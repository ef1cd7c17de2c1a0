/**
 * The header accumulator: Vary, Cache-Control and Access-Control-Expose-Headers are merged,
 * never overwritten, a rule every block keeps. Negotiation, CORS, compression and every other
 * block add their part through {@link mergeHeader}, so one response ends up with one coherent
 * value per field whatever the order the layers ran in.
 *
 * @module
 */
import { withHeaders } from '../internal/response.ts'
import {
  formatParameterValue,
  isToken,
  parseParameterValue,
  splitOutsideQuotes,
} from '../internal/syntax.ts'

export { withHeaders }

/**
 * The fields the accumulator knows how to merge.
 *
 * @example
 * ```ts
 * const name: MergedHeaderName = 'vary'
 * ```
 */
export type MergedHeaderName = 'vary' | 'cache-control' | 'access-control-expose-headers'

/** The most list members read from one field value; the rest is ignored. */
const MAX_MEMBERS = 256

function fieldNames(value: string | readonly string[] | null | undefined): string[] {
  if (value === null || value === undefined) return []
  const values = typeof value === 'string' ? [value] : value
  const names: string[] = []
  for (const item of values) {
    // RFC 9110 §12.5.5: Vary = #( "*" / field-name ); field-name = token (§5.1)
    for (const member of splitOutsideQuotes(item, ',', MAX_MEMBERS)) {
      if (member === '*' || isToken(member)) names.push(member)
    }
  }
  return names
}

function dedupe(names: readonly string[]): string[] {
  const seen = new Set<string>()
  const kept: string[] = []
  for (const name of names) {
    const key = name.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    kept.push(name)
  }
  return kept
}

/**
 * Merges field names into a Vary value: case-insensitive dedupe (first spelling kept), and
 * `*` absorbs every other member (RFC 9110 §12.5.5: `*` means the response varies on more
 * than request fields, so listing names beside it adds nothing). Invalid members are dropped.
 *
 * @example
 * ```ts
 * mergeVary('Accept-Encoding', ['origin', 'Accept-Encoding']) // 'Accept-Encoding, origin'
 * mergeVary('Origin', '*') // '*'
 * ```
 */
export function mergeVary(
  current: string | null | undefined,
  additions: string | readonly string[],
): string {
  const names = dedupe([...fieldNames(current), ...fieldNames(additions)])
  return names.includes('*') ? '*' : names.join(', ')
}

/**
 * Merges field names into an Access-Control-Expose-Headers value: case-insensitive dedupe,
 * first spelling kept. `*` stays an ordinary member here: with credentials the Fetch standard
 * reads it as a literal header name, so it cannot stand for "all".
 *
 * @example
 * ```ts
 * mergeExposeHeaders('ETag', ['etag', 'X-Request-Id']) // 'ETag, X-Request-Id'
 * ```
 */
export function mergeExposeHeaders(
  current: string | null | undefined,
  additions: string | readonly string[],
): string {
  return dedupe([...fieldNames(current), ...fieldNames(additions)]).join(', ')
}

/**
 * One Cache-Control directive; `name` is lowercase, `value` unquoted.
 *
 * @example
 * ```ts
 * const directive: CacheDirective = { name: 'max-age', value: '60' }
 * ```
 */
export interface CacheDirective {
  name: string
  value?: string
}

/**
 * Parses a Cache-Control value (RFC 9111 §5.2) into directives. Names are lowercased,
 * quoted values unquoted, malformed members dropped. Never throws.
 *
 * @example
 * ```ts
 * parseCacheControl('max-age=60, private="Set-Cookie"')
 * // [{ name: 'max-age', value: '60' }, { name: 'private', value: 'Set-Cookie' }]
 * ```
 */
export function parseCacheControl(value: string | null | undefined): CacheDirective[] {
  if (!value) return []
  const directives: CacheDirective[] = []
  for (const member of splitOutsideQuotes(value, ',', MAX_MEMBERS)) {
    // RFC 9111 §5.2: cache-directive = token [ "=" ( token / quoted-string ) ]
    const eq = member.indexOf('=')
    const name = (eq < 0 ? member : member.slice(0, eq)).trim().toLowerCase()
    if (!isToken(name)) continue
    if (eq < 0) {
      directives.push({ name })
      continue
    }
    const parsed = parseParameterValue(member.slice(eq + 1).trim())
    if (parsed !== undefined) directives.push({ name, value: parsed })
  }
  return directives
}

// RFC 9111 §1.2.2: delta-seconds = 1*DIGIT
const DELTA_SECONDS = new Set(['max-age', 's-maxage', 'stale-while-revalidate', 'stale-if-error'])
// RFC 9111 §5.2.2.4 and §5.2.2.7: no-cache and private take an optional list of field names.
const FIELD_LISTS = new Set(['no-cache', 'private'])

function combine(existing: CacheDirective, incoming: CacheDirective): CacheDirective {
  if (DELTA_SECONDS.has(existing.name)) {
    const a = /^\d+$/.test(existing.value ?? '') ? Number(existing.value) : undefined
    const b = /^\d+$/.test(incoming.value ?? '') ? Number(incoming.value) : undefined
    // The shorter freshness lifetime is the one every contributor can live with.
    if (a !== undefined && b !== undefined) return a <= b ? existing : incoming
    return a === undefined && b !== undefined ? incoming : existing
  }
  if (FIELD_LISTS.has(existing.name)) {
    // The bare form applies to the whole response, which is stricter than any list.
    if (existing.value === undefined || incoming.value === undefined) return { name: existing.name }
    const names = mergeExposeHeaders(existing.value, incoming.value)
    return names === '' ? { name: existing.name } : { name: existing.name, value: names }
  }
  return existing
}

/**
 * Merges Cache-Control directives by name, never dropping one a contributor asked for:
 * - the same delta-seconds directive (`max-age`, `s-maxage`, `stale-while-revalidate`,
 *   `stale-if-error`) keeps the smaller value;
 * - `private` / `no-cache`: the bare form wins over a field-name list, two lists are united;
 * - `private` removes `public` (the stricter of the two contradicting directives wins);
 * - any other directive present on both sides keeps its existing value.
 *
 * @example
 * ```ts
 * mergeCacheControl('public, max-age=600', 'private, max-age=60') // 'max-age=60, private'
 * ```
 */
export function mergeCacheControl(
  current: string | null | undefined,
  additions: string | readonly string[],
): string {
  const merged: CacheDirective[] = []
  const incoming = [
    ...parseCacheControl(current),
    ...(typeof additions === 'string' ? [additions] : additions).flatMap(parseCacheControl),
  ]
  for (const directive of incoming) {
    const at = merged.findIndex((d) => d.name === directive.name)
    if (at >= 0) merged[at] = combine(merged[at]!, directive)
    else merged.push(directive)
  }
  const isPrivate = merged.some((d) => d.name === 'private')
  return formatCacheControl(isPrivate ? merged.filter((d) => d.name !== 'public') : merged)
}

/**
 * Serialises directives: field-name lists as quoted strings (RFC 9111 §5.2.2.4 asks senders
 * not to use the token form), numbers as tokens, other values as tokens when they can be.
 *
 * @example
 * ```ts
 * formatCacheControl([{ name: 'no-cache', value: 'Set-Cookie' }]) // 'no-cache="Set-Cookie"'
 * ```
 */
export function formatCacheControl(directives: readonly CacheDirective[]): string {
  return directives
    .map(({ name, value }) => {
      if (value === undefined) return name
      const formatted = FIELD_LISTS.has(name)
        ? `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
        : formatParameterValue(value)
      return `${name}=${formatted}`
    })
    .join(', ')
}

const MERGERS: Record<
  MergedHeaderName,
  (current: string | null, additions: string | readonly string[]) => string
> = {
  vary: mergeVary,
  'cache-control': mergeCacheControl,
  'access-control-expose-headers': mergeExposeHeaders,
}

/**
 * The accumulator: merges `value` into the named field of `headers` (Vary, Cache-Control or
 * Access-Control-Expose-Headers) instead of overwriting it. An empty result removes nothing
 * and sets nothing.
 *
 * @example
 * ```ts
 * const headers = new Headers({ vary: 'Accept' })
 * mergeHeader(headers, 'vary', ['Origin', 'accept'])
 * headers.get('vary') // 'Accept, Origin'
 * ```
 */
export function mergeHeader(
  headers: Headers,
  name: MergedHeaderName,
  value: string | readonly string[],
): void {
  const key = name.toLowerCase() as MergedHeaderName
  const merge = MERGERS[key]
  if (merge === undefined) throw new TypeError(`mergeHeader(): cannot merge "${name}"`)
  const merged = merge(headers.get(key), value)
  if (merged !== '' && merged !== headers.get(key)) headers.set(key, merged)
}

/**
 * {@link mergeHeader} on a Response, for several fields at once. Returns the response to
 * use: the same one, or a copy when its headers were immutable (a `fetch()` result, a
 * `Response.redirect()`).
 *
 * @example
 * ```ts
 * return mergeResponseHeaders(response, { vary: 'Accept-Language', 'cache-control': 'private' })
 * ```
 */
export function mergeResponseHeaders(
  response: Response,
  fields: Partial<Record<MergedHeaderName, string | readonly string[]>>,
): Response {
  const entries = Object.entries(fields) as Array<[MergedHeaderName, string | readonly string[]]>
  if (entries.length === 0) return response
  return withHeaders(response, (headers) => {
    for (const [name, value] of entries) mergeHeader(headers, name, value)
  })
}
