/**
 * Quota policies ("10 per second", "1000 per day") and their compiled, integer form: the
 * three tick counts every store (memory, a Redis Lua script) computes with.
 *
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10#section-3.1
 * @module
 */

/**
 * One quota policy: at most `quota` units of cost per `windowSeconds`, with bursts up to the
 * whole quota. The name identifies the policy in the `RateLimit` / `RateLimit-Policy` fields and
 * in the `violated-policies` member of the 429 problem.
 *
 * @example
 * ```ts
 * const policies: RateLimitPolicy[] = [
 *   { name: 'burst', quota: 10, windowSeconds: 1 },
 *   { name: 'daily', quota: 1000, windowSeconds: 86_400 },
 * ]
 * ```
 */
export interface RateLimitPolicy {
  /** 1 to 64 printable ASCII characters (draft-ietf-httpapi-ratelimit-headers-10 §3: an sf-string). */
  readonly name: string
  /** Units of cost allowed per window: a whole number of at least 1. */
  readonly quota: number
  /** The window in whole seconds, at least 1 (draft -10 §3.1.3: no sub-second precision). */
  readonly windowSeconds: number
}

/**
 * A policy compiled to integers for the GCRA of `gcra.ts`. Time is counted in ticks of
 * `1 / ticksPerMs` milliseconds, chosen so that the emission interval (`windowMs / quota`) is
 * a whole number of ticks: `g = gcd(windowMs, quota)`, `ticksPerMs = quota / g`,
 * `emissionTicks = windowMs / g`, `limitTicks = windowMs * ticksPerMs = quota * emissionTicks`.
 * All arithmetic on these values stays exact in IEEE doubles (and so in Lua 5.1) because
 * `limitTicks` is at most {@link MAX_LIMIT_TICKS}.
 *
 * @example
 * ```ts
 * const [burst] = compilePolicies([{ name: 'burst', quota: 3, windowSeconds: 1 }])
 * // burst.ticksPerMs === 3, burst.emissionTicks === 1000, burst.limitTicks === 3000
 * ```
 */
export interface GcraPolicy extends RateLimitPolicy {
  /** Ticks per millisecond: `quota / gcd(windowSeconds * 1000, quota)`. */
  readonly ticksPerMs: number
  /** The emission interval (the cost of one unit) in ticks: `windowSeconds * 1000 / gcd`. */
  readonly emissionTicks: number
  /** The window in ticks: `quota * emissionTicks`. Debt above it is refused. */
  readonly limitTicks: number
}

/**
 * The largest window in ticks a policy may have (2^51). Debts stay at most `limitTicks`, and a
 * charge at most `limitTicks` more, so no intermediate value passes 2^52: every sum, product
 * and `floor` of the algorithm is exact in doubles. In practice: `quota * windowSeconds * 1000 /
 * gcd(windowSeconds * 1000, quota)` must not exceed 2^51, which every round-number policy meets
 * (1,000,000 per 30 days is 2,592,000,000 ticks).
 *
 * @example
 * ```ts
 * compilePolicies([{ name: 'p', quota: 7, windowSeconds: 86_400 }])[0]!.limitTicks <= MAX_LIMIT_TICKS // true
 * ```
 */
export const MAX_LIMIT_TICKS: number = 2 ** 51

const POLICY_NAME = /^[\x20-\x7E]{1,64}$/

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b]
  return a
}

/**
 * Validates policies and compiles each to its integer tick form. Throws a `TypeError` or
 * `RangeError` naming the offending policy: these are configuration mistakes, found at startup.
 *
 * @example
 * ```ts
 * const compiled = compilePolicies([
 *   { name: 'burst', quota: 10, windowSeconds: 1 },
 *   { name: 'daily', quota: 1000, windowSeconds: 86_400 },
 * ])
 * ```
 */
export function compilePolicies(policies: readonly RateLimitPolicy[]): readonly GcraPolicy[] {
  if (!Array.isArray(policies) || policies.length === 0) {
    throw new TypeError('Rate limit: at least one policy is required')
  }
  const names = new Set<string>()
  const compiled = policies.map((policy): GcraPolicy => {
    const { name, quota, windowSeconds } = policy
    if (typeof name !== 'string' || !POLICY_NAME.test(name)) {
      throw new TypeError(
        `Rate limit policy name ${JSON.stringify(name)} must be 1 to 64 printable ASCII characters`,
      )
    }
    if (names.has(name)) throw new TypeError(`Rate limit policy name "${name}" is used twice`)
    names.add(name)
    if (!Number.isSafeInteger(quota) || quota < 1) {
      throw new RangeError(`Rate limit policy "${name}": quota must be a whole number >= 1`)
    }
    if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 1) {
      throw new RangeError(`Rate limit policy "${name}": windowSeconds must be a whole number >= 1`)
    }
    const windowMs = windowSeconds * 1000
    const g = gcd(windowMs, quota)
    const ticksPerMs = quota / g
    const emissionTicks = windowMs / g
    const limitTicks = quota * emissionTicks
    if (!Number.isSafeInteger(windowMs) || limitTicks > MAX_LIMIT_TICKS) {
      throw new RangeError(
        `Rate limit policy "${name}": ${quota} per ${windowSeconds} s needs ${limitTicks} ticks, more than 2^51; use a rounder quota or a shorter window`,
      )
    }
    return Object.freeze({ name, quota, windowSeconds, ticksPerMs, emissionTicks, limitTicks })
  })
  return Object.freeze(compiled)
}
