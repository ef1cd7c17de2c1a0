/**
 * `evaluatePreconditions()`: the order of evaluation of RFC 9110 §13.2.2 (If-Match,
 * If-Unmodified-Since, If-None-Match, If-Modified-Since, If-Range), plus the optional 428 of
 * RFC 6585 §3. Pure: it reads request header fields and the validators the resource supplies,
 * and returns what to do. Run it before the handler changes anything.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 * @module
 */
import { locateEntityTag } from '@api-blocks/core'
import type { EntityTag } from './entity-tag.ts'
import { parseHttpDate } from './http-date.ts'
import type { HeaderRecord, HeaderSource } from './internal/headers.ts'
import { fromGetter, fromRecord, isGetter } from './internal/headers.ts'
import { matchList } from './internal/scan.ts'
import type { PreconditionResult } from './outcome.ts'
import {
  IF_MATCH_ABSENT,
  IF_MATCH_FAILED,
  IF_MATCH_INVALID,
  IF_NONE_MATCH_EXISTS,
  IF_NONE_MATCH_FAILED,
  IF_NONE_MATCH_INVALID,
  IF_UNMODIFIED_FAILED,
  NOT_MODIFIED_DATE,
  NOT_MODIFIED_ETAG,
  PROCEED,
  PROCEED_IGNORE_RANGE,
  REQUIRED,
} from './outcome.ts'

export type { HeaderSource } from './internal/headers.ts'

/**
 * What the resource knows about its selected representation, read before the handler runs:
 * usually from a version or revision column and an `updatedAt`.
 *
 * @example
 * ```ts
 * const validators: Validators = { etag: etagFromVersion(order.version), lastModified: order.updatedAt }
 * const absent: Validators = { exists: false } // PUT that creates: If-None-Match: * passes
 * ```
 */
export interface Validators {
  /**
   * The current entity tag: a wire-form string (`"v7"`, `W/"v7"`) such as
   * {@link etagFromVersion} makes, or a parsed {@link EntityTag}. Omit it when the resource
   * has no tag. A string that is not an entity tag throws a `TypeError` (a programming error).
   */
  etag?: string | EntityTag | undefined
  /** When the representation last changed (a `Date` or ms since the epoch); seconds count. */
  lastModified?: Date | number | undefined
  /**
   * Whether the resource has a current representation (default `true`). With `false`,
   * `If-Match: *` fails and `If-None-Match: *` passes: the "create only if absent" case.
   */
  exists?: boolean | undefined
}

/**
 * Options of {@link evaluatePreconditions}.
 *
 * @example
 * ```ts
 * const options: EvaluateOptions = { requireIfMatch: ['PATCH', 'DELETE'] }
 * evaluatePreconditions(request.method, request.headers, validators, options)
 * ```
 */
export interface EvaluateOptions {
  /**
   * Answer 428 when a write omits If-Match (RFC 6585 §3, lost-update prevention). `true`
   * means PUT, PATCH and DELETE; a list names the methods. `If-None-Match: *` also satisfies
   * the requirement, so a client can create a resource with PUT. Default: not required.
   */
  requireIfMatch?: boolean | readonly string[] | undefined
  /** The clock (ms since the epoch); only places the two-digit years of RFC 850 dates. */
  clock?: (() => number) | undefined
}

const DEFAULT_REQUIRED: readonly string[] = ['PUT', 'PATCH', 'DELETE']

// Bounds of the current tag and of an If-Range tag, filled by locateEntityTag. `tag` holds
// the bounds of `lastDeclared`: a resource read again and again is located once.
const tag = new Int32Array(3)
let lastDeclared: string | undefined
const scratch = new Int32Array(3)

function toSeconds(lastModified: Date | number | undefined): number | undefined {
  if (lastModified === undefined) return undefined
  const ms = typeof lastModified === 'number' ? lastModified : lastModified.getTime()
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined
}

function isRequired(method: string, require: EvaluateOptions['requireIfMatch']): boolean {
  if (require === undefined || require === false) return false
  return (require === true ? DEFAULT_REQUIRED : require).includes(method)
}

/**
 * Evaluates the conditional request header fields of RFC 9110 §13.1 in the order of §13.2.2,
 * against the validators of the resource's current representation. Never throws for any
 * header value (only for a `validators.etag` that is not an entity tag).
 *
 * Call it after routing, authentication, authorisation and the lookup of the resource, and
 * before the handler changes state: RFC 9110 §13.2.1 says preconditions are ignored whenever
 * the response without them would not be 2xx or 412, so a 401, 403, 404 or redirect is
 * answered first and never becomes a 304 or 412. A resource that may be created by this
 * request (PUT to a new URI) is evaluated with `exists: false`.
 *
 * - `proceed`: perform the method (see `ignoreRange`).
 * - `not-modified`: answer 304 (GET and HEAD only).
 * - `precondition-failed`: answer 412.
 * - `precondition-required`: answer 428 (only with `requireIfMatch`).
 *
 * Malformed and oversized fields: an If-Match or If-None-Match value that is not `*` or a
 * valid list of at most {@link MAX_ENTITY_TAGS} tags in {@link MAX_CONDITIONAL_HEADER_LENGTH}
 * characters matches nothing. If-Match then fails (412, RFC 9110 §13.1.1 "otherwise, the
 * condition is false"). If-None-Match then passes for GET and HEAD (a full 200, never a wrong
 * 304; §13.1.2 "otherwise, the condition is true"), but answers 412 for other methods: a write
 * never goes ahead on a precondition the server could not evaluate. An If-Modified-Since or
 * If-Unmodified-Since that is not a valid HTTP-date is ignored, as §13.1.3 and §13.1.4 require.
 *
 * @example
 * ```ts
 * const order = await orders.find(id) // 404 before preconditions (RFC 9110 §13.2.1)
 * const result = evaluatePreconditions(request.method, request.headers, {
 *   etag: etagFromVersion(order.version),
 *   lastModified: order.updatedAt,
 * })
 * if (result.outcome !== 'proceed') return toPreconditionResponse(result, { request })
 * ```
 */
export function evaluatePreconditions(
  method: string,
  headers: HeaderSource,
  validators: Validators,
  options?: EvaluateOptions,
): PreconditionResult {
  // The usual requests, from a record, once the validator tag is known to be well formed
  // (checked on its first use): no conditional field and no Range, so nothing to evaluate; or
  // `If-None-Match: *` alone on an existing resource (a create-if-absent PUT, or a GET), which
  // steps 1 to 3 answer at once. Absent fields are read directly, and this function stays
  // small enough for the engine to inline into its caller; everything else is `evaluate`.
  const declared = validators.etag
  if (
    !isGetter(headers) &&
    headers['if-match'] === undefined &&
    headers['if-unmodified-since'] === undefined &&
    options?.requireIfMatch === undefined &&
    (declared === lastDeclared || typeof declared !== 'string')
  ) {
    const ifNoneMatch = headers['if-none-match']
    if (ifNoneMatch === undefined) {
      if (headers['if-modified-since'] === undefined && headers['range'] === undefined) {
        return PROCEED
      }
    } else if (ifNoneMatch === '*' && validators.exists !== false && !isIgnoring(method)) {
      return method === 'GET' || method === 'HEAD' ? NOT_MODIFIED_ETAG : IF_NONE_MATCH_EXISTS
    }
  }
  return evaluate(method, headers, validators, options)
}

// RFC 9110 §13.2.1: a server MUST ignore the conditional header fields on a method that does
// not involve the selection or modification of a selected representation, such as CONNECT,
// OPTIONS or TRACE.
function isIgnoring(method: string): boolean {
  return method === 'OPTIONS' || method === 'CONNECT' || method === 'TRACE'
}

function evaluate(
  method: string,
  headers: HeaderSource,
  validators: Validators,
  options: EvaluateOptions | undefined,
): PreconditionResult {
  if (isIgnoring(method)) return PROCEED

  // Fields are read with literal names so the engine caches each lookup; `getter` is a
  // Fetch Headers (or anything with get), `record` a Node-style record.
  const getter = isGetter(headers) ? headers : undefined
  const record = getter === undefined ? (headers as HeaderRecord) : undefined
  const declared = validators.etag
  const exists = validators.exists !== false
  const isGetOrHead = method === 'GET' || method === 'HEAD'

  // The current tag, located in place (no substring): `tagSource` is undefined when the
  // resource has no tag or no current representation. Checked even when no field needs it,
  // so a malformed validator fails on every request, not only on conditional ones.
  let tagSource: string | undefined
  let tagStart = 0
  let tagEnd = 0
  let tagWeak = false
  if (typeof declared === 'string') {
    if (declared !== lastDeclared) {
      lastDeclared = undefined
      if (!locateEntityTag(declared, tag)) {
        throw new TypeError(
          `validators.etag ${JSON.stringify(declared)} is not an entity tag; quote it ("v7") or use etagFromVersion()`,
        )
      }
      lastDeclared = declared
    }
    if (exists) {
      tagSource = declared
      tagStart = tag[0]!
      tagEnd = tag[1]!
      tagWeak = tag[2] === 1
    }
  } else if (declared !== undefined && exists) {
    tagSource = declared.opaque
    tagEnd = tagSource.length
    tagWeak = declared.weak
  }

  const ifMatch = getter ? fromGetter(getter, 'if-match') : fromRecord(record!['if-match'])
  const ifNoneMatch = getter
    ? fromGetter(getter, 'if-none-match')
    : fromRecord(record!['if-none-match'])

  // RFC 6585 §3: the origin server requires the request to be conditional. If-None-Match: *
  // (create only if absent) is the precondition a creating PUT can send.
  if (
    ifMatch === null &&
    options?.requireIfMatch !== undefined &&
    isRequired(method, options.requireIfMatch) &&
    (ifNoneMatch === null || matchList(ifNoneMatch, undefined, 0, 0, false, false) !== 'any')
  ) {
    return REQUIRED
  }

  if (ifMatch !== null) {
    // RFC 9110 §13.2.2 step 1: If-Match, strong comparison (§13.1.1): a weak tag, listed or
    // current, never matches. True → step 3.
    if (!exists) {
      // §13.1.1: "*" is true only "if the origin server has a current representation", and
      // no listed tag can match a representation that does not exist.
      return IF_MATCH_ABSENT
    }
    // Fast path: the field is the strong validator string itself (one tag, sent back as received).
    if (ifMatch !== declared || tagWeak) {
      const match = matchList(ifMatch, tagSource, tagStart, tagEnd, tagWeak, true)
      if (match === 'invalid') return IF_MATCH_INVALID
      if (match === 'no-match') return IF_MATCH_FAILED
    }
  } else if (exists) {
    // RFC 9110 §13.2.2 step 2: If-Unmodified-Since, only without If-Match (§13.1.4).
    const ifUnmodifiedSince = getter
      ? fromGetter(getter, 'if-unmodified-since')
      : fromRecord(record!['if-unmodified-since'])
    if (ifUnmodifiedSince !== null) {
      const lastModified = toSeconds(validators.lastModified)
      // §13.1.4: ignored when the value is not a valid HTTP-date or the resource has no
      // modification date; otherwise true when last-modified <= the date.
      if (lastModified !== undefined) {
        const since = parseDate(ifUnmodifiedSince, options)
        if (since !== undefined && lastModified > since) return IF_UNMODIFIED_FAILED
      }
    }
  }

  if (ifNoneMatch !== null) {
    // RFC 9110 §13.2.2 step 3: If-None-Match, weak comparison (§13.1.2). True → step 5;
    // false → 304 for GET and HEAD, 412 for every other method.
    // Fast path as for If-Match: the validator string itself always matches weakly.
    const match =
      ifNoneMatch === declared && exists
        ? 'match'
        : ifNoneMatch === '*'
          ? 'any'
          : matchList(ifNoneMatch, tagSource, tagStart, tagEnd, tagWeak, false)
    if (match === 'match') return isGetOrHead ? NOT_MODIFIED_ETAG : IF_NONE_MATCH_FAILED
    if (match === 'any') {
      if (exists) return isGetOrHead ? NOT_MODIFIED_ETAG : IF_NONE_MATCH_EXISTS
    } else if (match === 'invalid' && !isGetOrHead) {
      return IF_NONE_MATCH_INVALID
    }
  } else if (isGetOrHead && exists) {
    // RFC 9110 §13.2.2 step 4: If-Modified-Since, GET and HEAD only, without If-None-Match
    // (§13.1.3). Ignored when invalid or when the resource has no modification date.
    const ifModifiedSince = getter
      ? fromGetter(getter, 'if-modified-since')
      : fromRecord(record!['if-modified-since'])
    if (ifModifiedSince !== null) {
      const lastModified = toSeconds(validators.lastModified)
      if (lastModified !== undefined) {
        const since = parseDate(ifModifiedSince, options)
        if (since !== undefined && lastModified <= since) return NOT_MODIFIED_DATE
      }
    }
  }

  // RFC 9110 §14.2: GET is the only method with range handling; §13.2.2 step 5: If-Range.
  const range = getter ? fromGetter(getter, 'range') : fromRecord(record!['range'])
  if (range === null) return PROCEED
  if (method !== 'GET') return PROCEED_IGNORE_RANGE
  const ifRange = getter ? fromGetter(getter, 'if-range') : fromRecord(record!['if-range'])
  if (ifRange === null) return PROCEED
  // RFC 9110 §13.1.5: an entity tag is true only when it strongly matches the current tag (a
  // weak tag never does). An HTTP-date is true only when it is a strong validator; §8.8.2.2
  // makes a Last-Modified time strong only if the server knows the representation did not
  // change twice within that second, which it cannot know here, so a date is treated as
  // weak: false, and the Range is ignored (a full 200, the safe answer).
  if (tagSource === undefined || tagWeak || !locateEntityTag(ifRange, scratch)) {
    return PROCEED_IGNORE_RANGE
  }
  const n = tagEnd - tagStart
  const holds =
    scratch[2] === 0 &&
    scratch[1]! - scratch[0]! === n &&
    ifRange.startsWith(tagSource.slice(tagStart, tagEnd), scratch[0])
  return holds ? PROCEED : PROCEED_IGNORE_RANGE
}

function parseDate(value: string, options: EvaluateOptions | undefined): number | undefined {
  const clock = options?.clock
  const ms = parseHttpDate(value, clock === undefined ? undefined : { now: clock() })
  return ms === undefined ? undefined : ms / 1000
}
