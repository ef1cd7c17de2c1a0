/**
 * The generic cell rate algorithm (GCRA) over several policies at once, in integer ticks.
 * This file is the reference model: the memory store runs it, and a store that cannot run
 * JavaScript next to its data (a Redis Lua script) replicates {@link gcraCheck} line for line.
 *
 * GCRA keeps one number per (key, policy): the theoretical arrival time, TAT, the moment at
 * which the key's debt would be paid off. A check at `now` costing `cost` units is allowed when
 * the debt after paying, `max(TAT, now) + cost * emission - now`, fits in the window; an
 * allowed check moves TAT to `max(TAT, now) + cost * emission`; a denied one changes nothing
 * (unlike a greedy token bucket, rate-limiter-flexible#286).
 *
 * ## Exact formulas (what a Lua script must compute)
 *
 * Inputs: `now` (integer ms), `cost` (integer >= 0) and, per policy `i`, the integers of
 * {@link GcraPolicy}: `q = ticksPerMs`, `e = emissionTicks`, `l = limitTicks`, `quota`.
 * Stored state per policy: `tat` (integer ms) and `frac` (integer, `0 <= frac < q`), meaning
 * TAT = `tat + frac / q` ms. A missing state means "no debt".
 *
 * ```
 * d[i]        = missing ? 0 : min(max((tat[i] - now) * q[i] + frac[i], 0), l[i])   -- debt, ticks
 * violated[i] = cost > quota[i]  or  d[i] + cost * e[i] > l[i]
 * allowed     = no violated[i]
 * if allowed and cost > 0, for every i:                      -- all policies, or none
 *   d[i]    = d[i] + cost * e[i]
 *   tat[i]  = now + floor(d[i] / q[i])                        -- exact: d[i] < 2^53
 *   frac[i] = d[i] - floor(d[i] / q[i]) * q[i]
 *   the key may be dropped at max(tat[i] + (frac[i] > 0 ? 1 : 0)) ms
 *     (in Redis: PEXPIRE key (that - now), a TTL relative to `now`)
 * reply: allowed, d[1..k]                                     -- debts after the check
 * ```
 *
 * `cost > quota` is tested first so that `cost * e` is only computed when it is at most `l`;
 * every value then stays below 2^52 (see `MAX_LIMIT_TICKS` in `policy.ts`). In Lua 5.1, compute
 * `floor(d / q)` as `(d - math.fmod(d, q)) / q` to stay exact without relying on rounding.
 *
 * Everything a client sees (remaining, reset, Retry-After) is derived from the reply by
 * {@link describeGcra}, in JavaScript, so stores only ever replicate the lines above.
 *
 * @see https://en.wikipedia.org/wiki/Generic_cell_rate_algorithm
 * @module
 */
import type { GcraPolicy } from './policy.ts'

/**
 * The stored GCRA state of one (key, policy): TAT = `tat + frac / ticksPerMs` milliseconds.
 *
 * @example
 * ```ts
 * const state: GcraState = { tat: 1_700_000_000_250, frac: 0 }
 * ```
 */
export interface GcraState {
  /** Whole milliseconds of the theoretical arrival time. */
  readonly tat: number
  /** The fraction of a millisecond, in ticks: `0 <= frac < ticksPerMs`. */
  readonly frac: number
}

/**
 * One atomic multi-policy check, as a store receives it: charge `cost` against every policy
 * of `key`, or against none.
 *
 * @example
 * ```ts
 * const check: GcraCheck = { key: 'ip:203.0.113.7/32', policies: compilePolicies(policies), cost: 1, now: Date.now() }
 * ```
 */
export interface GcraCheck {
  /** The client key (from `rateLimitKey` or your own function). */
  readonly key: string
  /** The compiled policies; their names identify the per-policy state under the key. */
  readonly policies: readonly GcraPolicy[]
  /** Units to charge: a whole number of at least 0. Zero reads the state and charges nothing. */
  readonly cost: number
  /** The time of the check, in whole milliseconds since the epoch. */
  readonly now: number
}

/**
 * What a store answers: whether the check was allowed (and so charged on every policy), and
 * each policy's debt after the check, in ticks, in the order of `GcraCheck.policies`.
 *
 * @example
 * ```ts
 * const reply: GcraReply = { allowed: true, debts: [1000, 86_400] }
 * ```
 */
export interface GcraReply {
  readonly allowed: boolean
  /** `d[i]` of the formulas: `max(TAT - now, 0)` in ticks, capped at `limitTicks`. */
  readonly debts: readonly number[]
}

/**
 * The reference model's answer: the {@link GcraReply} plus the states to store. When the
 * check is denied (or costs 0) `states` is the input array itself: nothing is written.
 *
 * @example
 * ```ts
 * const outcome: GcraOutcome = gcraCheck([undefined], check)
 * ```
 */
export interface GcraOutcome extends GcraReply {
  /** Whether `states` differs from the input, i.e. the store must write it. */
  readonly changed: boolean
  readonly states: readonly (GcraState | undefined)[]
  /** When every debt is paid: the store may drop the key from this moment (ms). */
  readonly expiresAt: number
}

/**
 * The debt of one policy at `now`, in ticks: `min(max((tat - now) * q + frac, 0), l)`.
 *
 * @example
 * ```ts
 * gcraDebt({ tat: 1_250, frac: 0 }, policy, 1_000) // 250 * policy.ticksPerMs (capped)
 * ```
 */
export function gcraDebt(state: GcraState | undefined, policy: GcraPolicy, now: number): number {
  return state === undefined ? 0 : debtOf(state.tat, state.frac, policy, now)
}

function debtOf(tat: number, frac: number, policy: GcraPolicy, now: number): number {
  return Math.min(Math.max((tat - now) * policy.ticksPerMs + frac, 0), policy.limitTicks)
}

/**
 * The formulas of this module, the one implementation of them, in place. `state` holds
 * `[tat0, frac0, tat1, frac1, ...]` lined up with `policies`; a policy without state is
 * `0, 0` (for any `now >= 0` that is a debt of 0). Writes each policy's debt after the check
 * into `debts` and, only when the check is allowed and costs more than 0, the new state into
 * `state` (all policies, after every one was checked: all or none).
 *
 * Returns `-1` when denied (nothing written), `0` when allowed at cost 0 (nothing written),
 * otherwise the moment (ms, > `now`) from which every debt is paid and the key may be dropped.
 * Not part of the package surface: stores outside this package use {@link gcraCheck}.
 *
 * @example
 * ```ts
 * const state = [0, 0] // one policy, no state yet
 * const debts: number[] = []
 * gcraApply(state, policies, 1, now, debts) // > now: allowed and written
 * ```
 */
export function gcraApply(
  state: number[],
  policies: readonly GcraPolicy[],
  cost: number,
  now: number,
  debts: number[],
): number {
  let allowed = true
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i]!
    const debt = debtOf(state[2 * i]!, state[2 * i + 1]!, policy, now)
    debts[i] = debt
    if (cost > policy.quota || debt + cost * policy.emissionTicks > policy.limitTicks) {
      allowed = false
    }
  }
  if (!allowed) return -1
  if (cost === 0) return 0
  let expiresAt = now
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i]!
    const q = policy.ticksPerMs
    const debt = debts[i]! + cost * policy.emissionTicks
    debts[i] = debt
    const frac = debt % q
    const tat = now + (debt - frac) / q
    state[2 * i] = tat
    state[2 * i + 1] = frac
    const paidAt = frac > 0 ? tat + 1 : tat
    if (paidAt > expiresAt) expiresAt = paidAt
  }
  return expiresAt
}

/**
 * The reference GCRA step over several policies: either every policy is charged `cost` or,
 * when any one of them would overflow its window, none is. Pure: `states[i]` is the stored
 * state of `check.policies[i]` (or `undefined`). A store in another language replicates it;
 * its tests can compare the two on random sequences, as the conformance suite does.
 *
 * @example
 * ```ts
 * const policies = compilePolicies([{ name: 'burst', quota: 10, windowSeconds: 1 }])
 * const outcome = gcraCheck([undefined], { key: 'k', policies, cost: 1, now: 0 })
 * // outcome.allowed === true, outcome.states[0] is { tat: 100, frac: 0 }
 * ```
 */
export function gcraCheck(
  states: readonly (GcraState | undefined)[],
  check: GcraCheck,
): GcraOutcome {
  const { policies, cost, now } = check
  const flat: number[] = []
  for (let i = 0; i < policies.length; i++) flat.push(states[i]?.tat ?? 0, states[i]?.frac ?? 0)
  const debts: number[] = new Array(policies.length)
  const written = gcraApply(flat, policies, cost, now, debts)
  if (written <= 0) {
    return { allowed: written === 0, debts, changed: false, states, expiresAt: now }
  }
  const next = policies.map((_, i): GcraState => ({ tat: flat[2 * i]!, frac: flat[2 * i + 1]! }))
  return { allowed: true, debts, changed: true, states: next, expiresAt: written }
}

/**
 * What one policy looks like to a client after a check. `resetSeconds` follows
 * draft-ietf-httpapi-ratelimit-headers-10 §4.1.2: the seconds until *additional* quota is
 * available (0 when the quota is full), which a GCRA knows exactly.
 *
 * @example
 * ```ts
 * const status: RateLimitPolicyStatus = {
 *   name: 'burst', quota: 10, windowSeconds: 1, remaining: 9, resetSeconds: 1, violated: false,
 * }
 * ```
 */
export interface RateLimitPolicyStatus {
  readonly name: string
  readonly quota: number
  readonly windowSeconds: number
  /** Units of cost the key may still spend right now (after this check's charge). */
  readonly remaining: number
  /** Whole seconds until `remaining` grows by one unit; 0 when the quota is full. */
  readonly resetSeconds: number
  /** Whether this policy refused the check (its name goes into `violated-policies`). */
  readonly violated: boolean
}

/**
 * The answer of a rate-limit check.
 *
 * @example
 * ```ts
 * const result = await limiter.check('principal:sub:alice')
 * if (!result.allowed) console.log(`retry in ${result.retryAfterSeconds} s`)
 * ```
 */
export interface RateLimitResult {
  /** Whether the request may proceed; when it may, every policy was charged. */
  readonly allowed: boolean
  /** One entry per policy, in the order the policies were configured. */
  readonly policies: readonly RateLimitPolicyStatus[]
  /**
   * 0 when allowed. When denied: whole seconds until this same check would be allowed (absent
   * other traffic), at least the `resetSeconds` of every violated policy. `Infinity` when the
   * cost exceeds a violated policy's quota, so no wait can admit it.
   */
  readonly retryAfterSeconds: number
  /** The time of the check (ms since the epoch), for epoch-based Reset headers. */
  readonly checkedAt: number
}

/**
 * Derives the client-facing {@link RateLimitResult} from a store's {@link GcraReply}: remaining
 * units, the seconds until more quota, the violated policies and Retry-After, all in integers.
 *
 * ```
 * remaining[i] = min(max(floor((l[i] - d[i]) / e[i]), 0), quota[i])
 * reset[i]     = d[i] == 0 ? 0 : ceil((d[i] - (l[i] - (remaining[i] + 1) * e[i])) / (q[i] * 1000))
 * wait[i]      = violated[i] ? (cost > quota[i] ? Infinity : ceil((d[i] + cost * e[i] - l[i]) / (q[i] * 1000))) : 0
 * retryAfter   = max(wait[i])
 * ```
 *
 * @example
 * ```ts
 * const result = describeGcra(check, await store.consume(check))
 * ```
 */
export function describeGcra(check: GcraCheck, reply: GcraReply): RateLimitResult {
  const { policies, cost, now } = check
  const { allowed, debts } = reply
  let retryAfterSeconds = 0
  const statuses: RateLimitPolicyStatus[] = new Array(policies.length)
  for (let i = 0; i < policies.length; i++) {
    const {
      name,
      quota,
      windowSeconds,
      emissionTicks: e,
      limitTicks: l,
      ticksPerMs: q,
    } = policies[i]!
    const d = debts[i] ?? 0
    const remaining = Math.min(Math.max(Math.floor((l - d) / e), 0), quota)
    const resetSeconds = d <= 0 ? 0 : Math.ceil((d - (l - (remaining + 1) * e)) / (q * 1000))
    const violated = !allowed && (cost > quota || d + cost * e > l)
    if (violated) {
      const wait = cost > quota ? Infinity : Math.ceil((d + cost * e - l) / (q * 1000))
      if (wait > retryAfterSeconds) retryAfterSeconds = wait
    }
    statuses[i] = { name, quota, windowSeconds, remaining, resetSeconds, violated }
  }
  return { allowed, policies: statuses, retryAfterSeconds, checkedAt: now }
}
