/**
 * Proactive content negotiation (RFC 9110 §12): media type, language and content coding,
 * each returning its choice plus the Vary tokens it used, and two opt-in guards: 406 when no
 * offered media type is acceptable, 415 when a request body has a media type the route does
 * not take. Every header value longer than its documented limit is treated as absent.
 *
 * @module
 */

import type { Middleware } from '@api-blocks/core'
import { getContext, setContext } from '@api-blocks/core'
import { problems } from '@api-blocks/problem-details'
import { errorResponse, problemResponse } from '../errors.ts'
import { mergeResponseHeaders } from '../headers/index.ts'
import { negotiationKey } from '../internal/keys.ts'
import { negotiateEncoding } from './encoding.ts'
import { negotiateContentLanguage } from './language.ts'
import type { MediaTypeOptions } from './media-type.ts'
import { matchesMediaType, negotiateMediaType } from './media-type.ts'
import type { Negotiation } from './types.ts'

export type { CodingRange } from './encoding.ts'
export { MAX_ACCEPT_ENCODING_LENGTH, negotiateEncoding, parseAcceptEncoding } from './encoding.ts'
export { negotiateContentLanguage } from './language.ts'
export type { MediaRange, MediaType, MediaTypeOptions } from './media-type.ts'
export {
  MAX_ACCEPT_LENGTH,
  MAX_ACCEPT_MEMBERS,
  MAX_CONTENT_TYPE_LENGTH,
  matchesMediaType,
  negotiateMediaType,
  parseAccept,
  parseMediaType,
  weighMediaType,
} from './media-type.ts'
export type { Negotiated, Negotiation } from './types.ts'

/**
 * What the server can offer, each list in its order of preference.
 *
 * @example
 * ```ts
 * const offers: NegotiationOffers = { types: ['application/json', 'text/csv'], languages: ['en', 'de'] }
 * ```
 */
export interface NegotiationOffers extends MediaTypeOptions {
  /** Media types, e.g. `['application/json', 'text/csv']`. */
  types?: readonly string[]
  /** Language tags, e.g. `['en', 'de', 'fr']`. */
  languages?: readonly string[]
  /** The language used when none matches (default: the first of `languages`). */
  defaultLanguage?: string
  /** Content codings, e.g. `['br', 'gzip']` (`identity` is always available). */
  encodings?: readonly string[]
}

/**
 * Negotiates every dimension that has offers. Only dimensions with offers consult a header
 * and add a Vary token. Never throws.
 *
 * @example
 * ```ts
 * const { type, language, vary } = negotiate(request, {
 *   types: ['application/json', 'text/csv'],
 *   languages: ['en', 'de'],
 * })
 * ```
 */
export function negotiate(request: Request, offers: NegotiationOffers): Negotiation {
  const result: Negotiation = {
    type: undefined,
    language: undefined,
    encoding: undefined,
    vary: [],
  }
  const { headers } = request
  if (offers.types !== undefined && offers.types.length > 0) {
    const media = negotiateMediaType(headers.get('accept'), offers.types, offers)
    result.type = media.choice
    result.vary.push(...media.vary)
  }
  if (offers.languages !== undefined && offers.languages.length > 0) {
    const fallback = offers.defaultLanguage ?? offers.languages[0]
    const language = negotiateContentLanguage(
      headers.get('accept-language'),
      offers.languages,
      fallback,
    )
    result.language = language.choice
    result.vary.push(...language.vary)
  }
  if (offers.encodings !== undefined) {
    const encoding = negotiateEncoding(headers.get('accept-encoding'), offers.encodings)
    result.encoding = encoding.choice
    result.vary.push(...encoding.vary)
  }
  return result
}

/**
 * The result the `negotiation()` middleware stored for this request, or `undefined`.
 *
 * @example
 * ```ts
 * const language = negotiatedOf(request)?.language ?? 'en'
 * ```
 */
export function negotiatedOf(request: Request): Negotiation | undefined {
  return getContext(request, negotiationKey)
}

/**
 * Options of {@link negotiation}.
 *
 * @example
 * ```ts
 * const options: NegotiationOptions = { types: ['application/json'], notAcceptable: true }
 * ```
 */
export interface NegotiationOptions extends NegotiationOffers {
  /**
   * Answer 406 (`problems.notAcceptable`, listing the offered types) when `types` are offered
   * and none is acceptable. Default `false`: the handler gets `type: undefined` and decides
   * (RFC 9110 §12.1 lets a server send its default representation instead).
   */
  notAcceptable?: boolean
}

/**
 * Negotiates once per request, stores the result (read it with {@link negotiatedOf}) and
 * merges the Vary tokens into the response, error responses included.
 *
 * @example
 * ```ts
 * const app = compose(negotiation({ types: ['application/json'], languages: ['en', 'de'], notAcceptable: true }))(
 *   async (request) => Response.json({ language: negotiatedOf(request)?.language }),
 * )
 * ```
 */
export function negotiation(options: NegotiationOptions): Middleware {
  const available = [...(options.types ?? [])]
  return async (request, next) => {
    const result = negotiate(request, options)
    setContext(request, negotiationKey, result)
    let response: Response
    // RFC 9110 §15.5.7: 406 when no representation is acceptable and the server opts out of
    // sending a default one.
    if (options.notAcceptable === true && available.length > 0 && result.type === undefined) {
      response = problemResponse(
        problems.notAcceptable.create({
          available,
          detail: `Acceptable media types: ${available.join(', ')}`,
        }),
        request,
      )
    } else {
      try {
        response = await next(request)
      } catch (error) {
        response = errorResponse(error, request)
      }
    }
    return result.vary.length > 0 ? mergeResponseHeaders(response, { vary: result.vary }) : response
  }
}

/**
 * Whether the request carries content: a body stream, or framing headers announcing one.
 * GET-style requests without content are never subject to the media-type check.
 */
function hasContent(request: Request): boolean {
  if (request.headers.has('transfer-encoding')) return true
  const length = request.headers.get('content-length')
  if (length !== null) return length.trim() !== '0'
  return request.body !== null
}

/**
 * Answers 415 (`problems.unsupportedMediaType`, listing `accepted`) for a request with
 * content whose Content-Type is missing or not one of `accepted` (RFC 9110 §15.5.16).
 * Entries may be `type/*`, `application/*+json`, and parameters the entry does not name are
 * ignored.
 *
 * @example
 * ```ts
 * const app = compose(requireContentType(['application/json', 'application/*+json']))(handler)
 * ```
 */
export function requireContentType(
  accepted: readonly string[],
  options: MediaTypeOptions = {},
): Middleware {
  const list = [...accepted]
  return async (request, next) => {
    if (
      hasContent(request) &&
      !matchesMediaType(request.headers.get('content-type'), list, options)
    ) {
      await request.body?.cancel().catch(() => undefined)
      return problemResponse(
        problems.unsupportedMediaType.create({
          accepted: list,
          detail: `Send one of: ${list.join(', ')}`,
        }),
        request,
      )
    }
    return next(request)
  }
}
