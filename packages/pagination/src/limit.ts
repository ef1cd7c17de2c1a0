/**
 * The page size: `limit` from a query string (docs/spec.md §2.3, §4.3) and Relay `first`/`last`,
 * checked and clamped by one policy, after Google AIP-158 (`page_size`):
 *
 * | input | answer |
 * |---|---|
 * | absent | `defaultLimit` |
 * | `0` | `defaultLimit` (AIP-158: 0 means "not given") |
 * | `1` to `maxLimit` | itself |
 * | above `maxLimit`, however many digits | `maxLimit` (AIP-158: coerced) |
 * | negative, fractional, exponent, sign, spaces, empty, non-numeric | 400 `bad-request` |
 * | given twice (`limit=5&limit=5`) | 400 `bad-request` |
 *
 * @see https://google.aip.dev/158
 * @module
 */
import { PaginationError } from './error.ts'

/**
 * The page-size policy of a list.
 *
 * @example
 * ```ts
 * const policy: LimitOptions = { defaultLimit: 20, maxLimit: 100 }
 * parseLimit(url.searchParams.getAll('limit'), policy)
 * ```
 */
export interface LimitOptions {
  /** The page size when none is given: 1 to `maxLimit`. */
  readonly defaultLimit: number
  /** The largest page size served; larger requests are coerced to it. */
  readonly maxLimit: number
}

/** @internal Throws for a policy that cannot work (a server bug, at request time). */
export function assertLimitOptions(options: LimitOptions): void {
  const { defaultLimit, maxLimit } = options
  if (!Number.isSafeInteger(maxLimit) || maxLimit < 1) {
    throw new RangeError('maxLimit must be a whole number of at least 1')
  }
  if (!Number.isSafeInteger(defaultLimit) || defaultLimit < 1 || defaultLimit > maxLimit) {
    throw new RangeError('defaultLimit must be a whole number from 1 to maxLimit')
  }
}

const DIGITS = /^[0-9]+$/

/**
 * Parses the `limit` query parameter. Pass every value the parameter has
 * (`searchParams.getAll('limit')`), so that a repeated one is caught; a single string or
 * `null` (from `searchParams.get`) works too. See the module table for every answer.
 *
 * Throws a {@link PaginationError} (`bad-request`, 400, code `LIMIT_INVALID` or
 * `PARAMETER_REPEATED`) and nothing else for any input.
 *
 * @example
 * ```ts
 * const policy = { defaultLimit: 20, maxLimit: 100 }
 * parseLimit(new URLSearchParams('limit=50').getAll('limit'), policy) // 50
 * parseLimit([], policy) // 20
 * parseLimit(['1000'], policy) // 100
 * parseLimit(['-1'], policy) // throws PaginationError (400)
 * ```
 */
export function parseLimit(
  values: string | readonly string[] | null | undefined,
  options: LimitOptions,
): number {
  assertLimitOptions(options)
  const list =
    values === null || values === undefined ? [] : typeof values === 'string' ? [values] : values
  if (list.length > 1) {
    throw new PaginationError(
      'PARAMETER_REPEATED',
      'The limit parameter must be given at most once.',
    )
  }
  const [value] = list
  if (value === undefined) return options.defaultLimit
  if (typeof value !== 'string' || !DIGITS.test(value)) {
    throw new PaginationError(
      'LIMIT_INVALID',
      `The limit parameter must be a whole number from 1 to ${options.maxLimit}.`,
    )
  }
  // Digits only, so Number() is exact up to 2^53 and Infinity beyond: both clamp.
  const limit = Number(value)
  // AIP-158: zero means "not given"; above the maximum is coerced to the maximum.
  if (limit === 0) return options.defaultLimit
  return Math.min(limit, options.maxLimit)
}
