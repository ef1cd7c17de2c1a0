/**
 * Serialising a problem to an `application/problem+json` Response.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9457#section-3
 * @module
 */

import type { HeadersInitLike, ProblemDetails } from '@api-blocks/core'
import { isProblemSource } from '@api-blocks/core'
import { problems } from './catalog.ts'
import { titlesOf } from './internal/titles.ts'
import { negotiateLanguage } from './language.ts'
import { DEFAULT_PROBLEM_BASE, resolveProblemType } from './problem.ts'

/**
 * The media type of RFC 9457 §6.1.
 *
 * @example
 * ```ts
 * const isProblem = response.headers.get('content-type') === PROBLEM_MEDIA_TYPE
 * ```
 */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json'

/**
 * Options of {@link toProblemResponse} and {@link serializeProblem}.
 *
 * @example
 * ```ts
 * const options: ProblemResponseOptions = { request, base: 'https://api.example/problems/' }
 * ```
 */
export interface ProblemResponseOptions {
  /**
   * The request being answered: gives `instance` (its path, when at most 2048 characters) and
   * the Accept-Language.
   */
  request?: Request
  /** Base URI that problem-type slugs resolve against. */
  base?: string
  /**
   * Where a missing `instance` comes from: the request path (default) or the request id
   * (`urn:request-id:<id>`, when `requestId` is given).
   */
  instanceFrom?: 'path' | 'request-id'
  /** The request id, used when `instanceFrom` is `request-id`. */
  requestId?: string
  /** The language of the untranslated `title` (default `en`). */
  defaultLanguage?: string
  /** More response headers (Allow, Retry-After, WWW-Authenticate …). */
  headers?: HeadersInitLike
}

/**
 * The wire form of a problem: slugs resolved to absolute type URIs, standard members first,
 * `instance` filled in, `title` localised. Pure; no Response involved.
 *
 * @example
 * ```ts
 * serializeProblem(problems.notFound.create(), { base: 'https://example.com/problems/' })
 * ```
 */
export function serializeProblem(
  problem: ProblemDetails,
  options: ProblemResponseOptions = {},
): { body: ProblemDetails; language: string | undefined } {
  const { request, base = DEFAULT_PROBLEM_BASE, defaultLanguage = 'en' } = options
  const { type, title, status, detail, instance, ...extensions } = problem
  const titles = titlesOf(problem)
  let language: string | undefined
  let localTitle = title
  if (titles !== undefined) {
    const choice = negotiateLanguage(
      request?.headers.get('accept-language'),
      [defaultLanguage, ...Object.keys(titles)],
      defaultLanguage,
    )
    language = choice ?? defaultLanguage
    localTitle = titles[language] ?? title
  }
  const body: ProblemDetails = { type: resolveProblemType(type, base), title: localTitle, status }
  if (detail !== undefined) body.detail = detail
  const where = instance ?? instanceOf(options)
  if (where !== undefined) body.instance = where
  return { body: Object.assign(body, extensions), language }
}

// The longest request path echoed back as `instance`. Past it the member is left out: a 414
// must not repeat the URI it refused as too long, and no problem should echo more of the
// request than a client could need to recognise it.
const MAX_INSTANCE_PATH_LENGTH = 2048

function instanceOf(options: ProblemResponseOptions): string | undefined {
  if (options.instanceFrom === 'request-id' && options.requestId !== undefined) {
    return `urn:request-id:${encodeURIComponent(options.requestId)}`
  }
  if (options.request === undefined) return undefined
  // Only the path: a query string may carry what should not be echoed back. The URL parser
  // has percent-encoded it, so it holds visible ASCII only.
  const path = new URL(options.request.url).pathname
  return path.length > MAX_INSTANCE_PATH_LENGTH ? undefined : path
}

/**
 * Answers a problem as an `application/problem+json` Response whose HTTP status equals the
 * body's `status` (RFC 9457 §3.1.2). When the problem type has translated titles, the title
 * follows Accept-Language, and the response carries Content-Language and
 * `Vary: Accept-Language`.
 *
 * @example
 * ```ts
 * return toProblemResponse(problems.notFound.create({ detail: 'No order 42' }), { request })
 * ```
 */
export function toProblemResponse(
  problem: ProblemDetails,
  options: ProblemResponseOptions = {},
): Response {
  const { body, language } = serializeProblem(problem, options)
  const headers = new Headers(options.headers)
  headers.set('content-type', PROBLEM_MEDIA_TYPE)
  if (language !== undefined) {
    headers.set('content-language', language)
    const vary = headers.get('vary')
    if (!vary?.toLowerCase().includes('accept-language')) {
      headers.set('vary', vary ? `${vary}, Accept-Language` : 'Accept-Language')
    }
  }
  return new Response(JSON.stringify(body), { status: body.status, headers })
}

/**
 * The last line of defence: turns anything a handler threw into a problem Response. An error
 * that implements {@link ProblemSource} answers its own problem; anything else answers the
 * catalog's 500 `internal` problem, which never carries the error's message or stack.
 *
 * @example
 * ```ts
 * try { return await handler(request) } catch (error) { return errorToProblemResponse(error, { request }) }
 * ```
 */
export function errorToProblemResponse(
  error: unknown,
  options: ProblemResponseOptions = {},
): Response {
  const problem = isProblemSource(error) ? error.toProblem() : problems.internal.create()
  return toProblemResponse(problem, options)
}
