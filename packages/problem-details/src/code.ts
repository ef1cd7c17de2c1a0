/**
 * The stable machine code of a problem type, in the one spelling of every api-blocks error
 * code (UPPER_SNAKE_CASE): the slug, or the last segment of an absolute type URI, upper-cased
 * with every run of other characters as one `_`. `not-found` is `NOT_FOUND`,
 * `https://iana.org/assignments/http-problem-types#quota-exceeded` is `QUOTA_EXCEEDED`, and
 * `about:blank` is `BLANK`.
 *
 * @module
 */

const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:/

/** Whether a problem `type` is an absolute URI (it has a scheme, RFC 3986 §3.1), not a slug. */
export function isAbsoluteType(type: string): boolean {
  return ABSOLUTE.test(type)
}

/**
 * The code of a problem type (see the module description).
 *
 * @example
 * ```ts
 * problemCode('idempotency-key-reused') // 'IDEMPOTENCY_KEY_REUSED'
 * ```
 */
export function problemCode(type: string): string {
  const name = isAbsoluteType(type) ? (type.split(/[/#:]/).pop() ?? type) : type
  return name
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
}
