/**
 * Several problems of one type as one `errors` array of `{ detail, pointer }` members, as
 * RFC 9457 §3 advises, with JSON Pointers (RFC 6901) to the offending parts of the body.
 *
 * @module
 */
import type { z } from 'zod'

/** One entry of an `errors` extension array. */
export interface ProblemPointer {
  detail: string
  /** A JSON Pointer (RFC 6901) into the request body; `''` is the whole body. */
  pointer: string
}

/**
 * Formats a path as a JSON Pointer (RFC 6901 §3: `~` becomes `~0`, `/` becomes `~1`).
 *
 * @example
 * ```ts
 * toJsonPointer(['items', 0, 'a/b']) // '/items/0/a~1b'
 * ```
 */
export function toJsonPointer(path: readonly PropertyKey[]): string {
  let pointer = ''
  for (const segment of path) {
    const token = typeof segment === 'symbol' ? (segment.description ?? '') : String(segment)
    pointer += `/${token.replaceAll('~', '~0').replaceAll('/', '~1')}`
  }
  return pointer
}

/**
 * Turns the issues of a failed zod parse into `errors` entries with JSON Pointers, at most
 * `limit` of them (default 100), so one huge invalid body cannot make a huge answer.
 *
 * @example
 * ```ts
 * const result = schema.safeParse(body)
 * if (!result.success) throw problems.validation.error({ errors: zodIssuesToPointers(result.error) })
 * ```
 */
export function zodIssuesToPointers(error: z.ZodError, limit = 100): ProblemPointer[] {
  return error.issues.slice(0, limit).map((issue) => ({
    detail: issue.message,
    pointer: toJsonPointer(issue.path),
  }))
}
