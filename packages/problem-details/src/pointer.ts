/**
 * Several problems of one type as one `errors` array of `{ detail, pointer }` members, as
 * RFC 9457 §3 advises, with JSON Pointers (RFC 6901) to the offending parts of the body.
 * Turning a schema's issues into such entries is the job of the validation entry point,
 * `@api-blocks/problem-details/validation`.
 *
 * @module
 */

/**
 * One entry of an `errors` extension array.
 *
 * @example
 * ```ts
 * const entry: ProblemPointer = { detail: 'Expected a number', pointer: '/items/0/quantity' }
 * ```
 */
export interface ProblemPointer {
  detail: string
  /** A JSON Pointer (RFC 6901) into the request body; `''` is the whole body. */
  pointer: string
}

/**
 * Formats a path as a JSON Pointer (RFC 6901 §3: `~` becomes `~0`, `/` becomes `~1`). A
 * symbol segment is written as its description.
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
