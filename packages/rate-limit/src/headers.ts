/**
 * Rate-limit response header fields, written from a {@link RateLimitResult}:
 * - `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (docs/spec.md §7.2; the separate
 *   fields of draft-ietf-httpapi-ratelimit-headers-06, Reset in delta seconds);
 * - `X-RateLimit-Limit`, `-Remaining`, `-Reset` (docs/spec.md §7.2; Reset in delta seconds by
 *   default, epoch seconds as an option, since deployed clients disagree);
 * - optionally the structured `RateLimit` and `RateLimit-Policy` List fields of
 *   draft-ietf-httpapi-ratelimit-headers-10 §3 and §4, one member per policy;
 * - `Retry-After` (RFC 9110 §10.2.3, delay-seconds) on a denied check.
 *
 * @module
 */

import type { ListMember } from '@api-blocks/http/structured-fields'
import { parseList, serializeList } from '@api-blocks/http/structured-fields'
import type { RateLimitPolicyStatus, RateLimitResult } from './gcra.ts'

/**
 * Options of {@link rateLimitHeaders} and {@link mergeRateLimitHeaders}.
 *
 * @example
 * ```ts
 * const options: RateLimitHeaderOptions = { structured: true, xRateLimitReset: 'epoch-seconds' }
 * ```
 */
export interface RateLimitHeaderOptions {
  /** `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (delta seconds). Default true. */
  rateLimit?: boolean
  /** `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`. Default true. */
  xRateLimit?: boolean
  /**
   * The unit of `X-RateLimit-Reset`: `delta-seconds` (default, the unit of `RateLimit-Reset`,
   * as throttled and Zalando's guidelines use) or `epoch-seconds` (GitHub's and
   * express-rate-limit's). `RateLimit-Reset` and the `t` parameter are delta seconds by
   * definition in their drafts, so they have no such option.
   */
  xRateLimitReset?: 'delta-seconds' | 'epoch-seconds'
  /** The draft -10 structured `RateLimit` and `RateLimit-Policy` fields. Default false. */
  structured?: boolean
  /**
   * Also list the written field names in `Access-Control-Expose-Headers` (merged), so that
   * browser clients on other origins can read them. Default false.
   */
  exposeHeaders?: boolean
}

/**
 * The policy the separate (`RateLimit-*`, `X-RateLimit-*`) fields describe: on a denied check
 * the violated policy with the longest wait; otherwise the one with the fewest remaining units
 * (ties: the later reset, then the first configured).
 *
 * @example
 * ```ts
 * mostRestrictivePolicy(result).name // 'burst'
 * ```
 */
export function mostRestrictivePolicy(result: RateLimitResult): RateLimitPolicyStatus {
  const [first, ...rest] = result.policies
  if (first === undefined) throw new TypeError('A rate-limit result has at least one policy')
  let best = first
  for (const policy of rest) {
    if (best.violated !== policy.violated) {
      if (policy.violated) best = policy
      continue
    }
    if (
      policy.remaining < best.remaining ||
      (policy.remaining === best.remaining && policy.resetSeconds > best.resetSeconds)
    ) {
      best = policy
    }
  }
  return best
}

function structuredPolicy(policy: RateLimitPolicyStatus): ListMember {
  return {
    value: { type: 'string', value: policy.name },
    params: [
      ['q', { type: 'integer', value: policy.quota }],
      ['w', { type: 'integer', value: policy.windowSeconds }],
    ],
  }
}

function structuredLimit(policy: RateLimitPolicyStatus): ListMember {
  return {
    value: { type: 'string', value: policy.name },
    params: [
      ['r', { type: 'integer', value: policy.remaining }],
      ['t', { type: 'integer', value: policy.resetSeconds }],
    ],
  }
}

/** Policy names already present in a structured field, so a merge never lists one twice. */
function namesIn(value: string | null): Set<string> {
  const names = new Set<string>()
  for (const member of (value === null ? [] : parseList(value)) ?? []) {
    if ('value' in member && (member.value.type === 'string' || member.value.type === 'token')) {
      names.add(member.value.value)
    }
  }
  return names
}

function appendStructured(
  target: Headers,
  name: string,
  result: RateLimitResult,
  member: (policy: RateLimitPolicyStatus) => ListMember,
): boolean {
  const present = namesIn(target.get(name))
  const members = result.policies.filter((policy) => !present.has(policy.name)).map(member)
  if (members.length === 0) return false
  // RFC 9651 §3.1: a List may be split over several field lines; appending merges.
  target.append(name, serializeList(members))
  return true
}

/**
 * Writes the rate-limit fields of `result` into `target`, merging and never overwriting:
 * a separate-field group (`RateLimit-*` or `X-RateLimit-*`) that is already present is left
 * as it is (an inner limiter spoke first), structured members are appended for policies not
 * yet listed, and `Retry-After` is only added when absent.
 *
 * @example
 * ```ts
 * const response = await next(request)
 * mergeRateLimitHeaders(response.headers, result, { structured: true })
 * ```
 */
export function mergeRateLimitHeaders(
  target: Headers,
  result: RateLimitResult,
  options: RateLimitHeaderOptions = {},
): void {
  const {
    rateLimit = true,
    xRateLimit = true,
    xRateLimitReset = 'delta-seconds',
    structured = false,
    exposeHeaders = false,
  } = options
  const written: string[] = []
  const policy = mostRestrictivePolicy(result)
  if (rateLimit && !['limit', 'remaining', 'reset'].some((f) => target.has(`ratelimit-${f}`))) {
    // draft-ietf-httpapi-ratelimit-headers-06, the RateLimit-Reset field: delta seconds
    target.set('RateLimit-Limit', String(policy.quota))
    target.set('RateLimit-Remaining', String(policy.remaining))
    target.set('RateLimit-Reset', String(policy.resetSeconds))
    written.push('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset')
  }
  if (xRateLimit && !['limit', 'remaining', 'reset'].some((f) => target.has(`x-ratelimit-${f}`))) {
    const reset =
      xRateLimitReset === 'epoch-seconds'
        ? // Never earlier than the real moment: round the check time up, then add.
          Math.ceil(result.checkedAt / 1000) + policy.resetSeconds
        : policy.resetSeconds
    target.set('X-RateLimit-Limit', String(policy.quota))
    target.set('X-RateLimit-Remaining', String(policy.remaining))
    target.set('X-RateLimit-Reset', String(reset))
    written.push('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset')
  }
  if (structured) {
    // draft -10 §3 and §4: one Quota Policy Item and one Service Limit Item per policy
    if (appendStructured(target, 'RateLimit-Policy', result, structuredPolicy)) {
      written.push('RateLimit-Policy')
    }
    if (appendStructured(target, 'RateLimit', result, structuredLimit)) written.push('RateLimit')
  }
  // RFC 6585 §4 and draft -10 §6: Retry-After, never earlier than a violated policy's reset
  // (retryAfterSeconds >= the resetSeconds of every violated policy, by construction).
  if (!result.allowed && Number.isFinite(result.retryAfterSeconds) && !target.has('retry-after')) {
    target.set('Retry-After', String(result.retryAfterSeconds))
    written.push('Retry-After')
  }
  if (exposeHeaders && written.length > 0) exposeFieldNames(target, written)
}

function exposeFieldNames(target: Headers, names: readonly string[]): void {
  const current = target.get('access-control-expose-headers')
  const listed = (current ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  if (listed.includes('*')) return
  const lower = new Set(listed.map((name) => name.toLowerCase()))
  const added = names.filter((name) => !lower.has(name.toLowerCase()))
  if (added.length > 0)
    target.set('Access-Control-Expose-Headers', [...listed, ...added].join(', '))
}

/**
 * The rate-limit fields of `result` as a fresh `Headers` (see {@link mergeRateLimitHeaders}).
 *
 * @example
 * ```ts
 * const result = await limiter.check(key)
 * const headers = rateLimitHeaders(result, { xRateLimitReset: 'epoch-seconds' })
 * // RateLimit-Limit: 10, RateLimit-Remaining: 9, RateLimit-Reset: 1, X-RateLimit-Reset: 1767225601
 * ```
 */
export function rateLimitHeaders(
  result: RateLimitResult,
  options: RateLimitHeaderOptions = {},
): Headers {
  const headers = new Headers()
  mergeRateLimitHeaders(headers, result, options)
  return headers
}

/**
 * One member of a `RateLimit-Policy` field, as a client reads it.
 *
 * @example
 * ```ts
 * const daily: RateLimitPolicyField = { name: 'daily', quota: 1000, quotaUnit: 'requests', windowSeconds: 86_400 }
 * ```
 */
export interface RateLimitPolicyField {
  readonly name: string
  /** `q`: the quota, in quota units. */
  readonly quota: number
  /** `qu`: the quota unit (`requests` when absent). */
  readonly quotaUnit: string
  /** `w`: the window in seconds, when given. */
  readonly windowSeconds?: number
  /** `pk`: the partition key, when given. */
  readonly partitionKey?: Uint8Array
}

/**
 * One member of a `RateLimit` field, as a client reads it.
 *
 * @example
 * ```ts
 * const burst: RateLimitServiceLimit = { name: 'burst', remaining: 0, resetSeconds: 1 }
 * ```
 */
export interface RateLimitServiceLimit {
  readonly name: string
  /** `r`: the remaining quota units. */
  readonly remaining: number
  /** `t`: seconds until more quota is available, when given. */
  readonly resetSeconds?: number
  /** `pk`: the partition key, when given. */
  readonly partitionKey?: Uint8Array
}

/**
 * What {@link parseRateLimitFields} reads.
 *
 * @example
 * ```ts
 * const { policies, limits }: RateLimitFields = parseRateLimitFields(response.headers)
 * ```
 */
export interface RateLimitFields {
  readonly policies: readonly RateLimitPolicyField[]
  readonly limits: readonly RateLimitServiceLimit[]
}

function param(member: ListMember, key: string) {
  return member.params.find(([name]) => name === key)?.[1]
}

function whole(member: ListMember, key: string, min: number): number | undefined {
  const value = param(member, key)
  return value?.type === 'integer' && value.value >= min ? value.value : undefined
}

function named(member: ListMember): string | undefined {
  // draft -10 §3 says String; tokens, which earlier revisions used, are read too.
  if (!('value' in member)) return undefined
  const { value } = member
  return value.type === 'string' || value.type === 'token' ? value.value : undefined
}

/**
 * Reads the structured `RateLimit-Policy` and `RateLimit` fields of a response, as a client.
 * A field that is not a valid RFC 9651 List (or longer than 8192 characters) is ignored as a
 * whole; a member without its required parameter (`q`, `r`) is skipped. Never throws.
 *
 * @example
 * ```ts
 * const { policies, limits } = parseRateLimitFields(response.headers)
 * const burst = limits.find((limit) => limit.name === 'burst')
 * ```
 */
export function parseRateLimitFields(headers: Headers): RateLimitFields {
  const policies: RateLimitPolicyField[] = []
  for (const member of parseList(headers.get('ratelimit-policy') ?? '') ?? []) {
    const name = named(member)
    const quota = whole(member, 'q', 0)
    if (name === undefined || quota === undefined) continue
    const unit = param(member, 'qu')
    const windowSeconds = whole(member, 'w', 1)
    const pk = param(member, 'pk')
    policies.push({
      name,
      quota,
      quotaUnit: unit?.type === 'string' || unit?.type === 'token' ? unit.value : 'requests',
      ...(windowSeconds === undefined ? {} : { windowSeconds }),
      ...(pk?.type === 'binary' ? { partitionKey: pk.value } : {}),
    })
  }
  const limits: RateLimitServiceLimit[] = []
  for (const member of parseList(headers.get('ratelimit') ?? '') ?? []) {
    const name = named(member)
    const remaining = whole(member, 'r', 0)
    if (name === undefined || remaining === undefined) continue
    const resetSeconds = whole(member, 't', 0)
    const pk = param(member, 'pk')
    limits.push({
      name,
      remaining,
      ...(resetSeconds === undefined ? {} : { resetSeconds }),
      ...(pk?.type === 'binary' ? { partitionKey: pk.value } : {}),
    })
  }
  return { policies, limits }
}
