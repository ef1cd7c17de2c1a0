/**
 * Reading problems as a client: from JSON or from a Response.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9457#section-3.1
 * @module
 */
import type { ProblemDetails } from '@api-blocks/core'
import { BodyReadError, readStream } from '@api-blocks/core'

/**
 * The largest problem body {@link readProblem} reads by default, in bytes (64 KiB).
 *
 * @example
 * ```ts
 * const problem = await readProblem(response, { maxBytes: MAX_PROBLEM_BODY_BYTES / 4 })
 * ```
 */
export const MAX_PROBLEM_BODY_BYTES: number = 64 * 1024

/**
 * A problem as parsed from an untrusted source: `title` and `status` may be missing.
 *
 * @example
 * ```ts
 * const parsed: ParsedProblem | undefined = parseProblem(JSON.parse(text))
 * ```
 */
export interface ParsedProblem {
  type: string
  title?: string
  status?: number
  detail?: string
  instance?: string
  [extension: string]: unknown
}

/**
 * Normalises a parsed JSON value into a problem. Members of the wrong JSON type are ignored,
 * as RFC 9457 §3.1 requires; a missing or invalid `type` means `about:blank`. Returns
 * `undefined` when the value is not a JSON object.
 *
 * @example
 * ```ts
 * parseProblem({ type: 42, title: 'Out of credit', status: '403' })
 * // { type: 'about:blank', title: 'Out of credit' }
 * ```
 */
export function parseProblem(value: unknown): ParsedProblem | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const source = value as Record<string, unknown>
  const { type, title, status, detail, instance, ...extensions } = source
  const problem: ParsedProblem = { type: typeof type === 'string' ? type : 'about:blank' }
  if (typeof title === 'string') problem.title = title
  if (Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599) {
    problem.status = status as number
  }
  if (typeof detail === 'string') problem['detail'] = detail
  if (typeof instance === 'string') problem['instance'] = instance
  for (const [name, member] of Object.entries(extensions)) {
    // `__proto__` from JSON.parse is an own data property; copying it with `=` would set the prototype.
    Object.defineProperty(problem, name, {
      value: member,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return problem
}

/**
 * Reads a problem from a Response: only `application/problem+json` (or plain JSON) bodies up
 * to `maxBytes` are read. `status` always comes from the HTTP status, which is the truth
 * (RFC 9457 §3.1.2). Returns `undefined` when the body is not a problem.
 *
 * @example
 * ```ts
 * const problem = await readProblem(await fetch(url))
 * if (problems.notFound.is(problem)) …
 * ```
 */
export async function readProblem(
  response: Response,
  options: { maxBytes?: number } = {},
): Promise<ProblemDetails | undefined> {
  const mediaType = response.headers.get('content-type')?.split(';', 1)[0]?.trim().toLowerCase()
  if (mediaType !== 'application/problem+json' && mediaType !== 'application/json') {
    await response.body?.cancel()
    return undefined
  }
  const text = await readText(response, options.maxBytes ?? MAX_PROBLEM_BODY_BYTES)
  if (text === undefined) return undefined
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return undefined
  }
  const problem = parseProblem(json)
  if (problem === undefined) return undefined
  return { ...problem, title: problem.title ?? '', status: response.status }
}

// The body as strict UTF-8 text; `undefined` when it is larger than `maxBytes` or not UTF-8.
async function readText(response: Response, maxBytes: number): Promise<string | undefined> {
  if (response.body === null) return ''
  let bytes: Uint8Array
  try {
    bytes = await readStream(response.body, maxBytes)
  } catch (error) {
    if (error instanceof BodyReadError && error.code === 'BODY_TOO_LARGE') return undefined
    throw error
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}
