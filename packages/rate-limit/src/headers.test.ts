import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { GcraState, RateLimitPolicyStatus, RateLimitResult } from './gcra.ts'
import { describeGcra, gcraCheck } from './gcra.ts'
import {
  mergeRateLimitHeaders,
  mostRestrictivePolicy,
  parseRateLimitFields,
  rateLimitHeaders,
} from './headers.ts'
import { compilePolicies } from './policy.ts'

const T0 = 1_700_000_000_000
const timeBox = { interruptAfterTimeLimit: 3000, numRuns: 300 }

const status = (
  overrides: Partial<RateLimitPolicyStatus> & { name: string },
): RateLimitPolicyStatus => ({
  quota: 10,
  windowSeconds: 1,
  remaining: 10,
  resetSeconds: 0,
  violated: false,
  ...overrides,
})

const allowed: RateLimitResult = {
  allowed: true,
  checkedAt: T0,
  retryAfterSeconds: 0,
  policies: [
    status({ name: 'burst', remaining: 6, resetSeconds: 1 }),
    status({ name: 'daily', quota: 1000, windowSeconds: 86_400, remaining: 996, resetSeconds: 87 }),
  ],
}

const denied: RateLimitResult = {
  allowed: false,
  checkedAt: T0 + 250,
  retryAfterSeconds: 3,
  policies: [
    status({ name: 'burst', remaining: 0, resetSeconds: 1, violated: true }),
    status({ name: 'daily', quota: 1000, windowSeconds: 86_400, remaining: 0, resetSeconds: 87 }),
  ],
}

const fields = (headers: Headers) => Object.fromEntries(headers.entries())

describe('rateLimitHeaders', () => {
  test('SPEC §7.2 defaults: RateLimit-* and X-RateLimit-*, Reset in delta seconds, for the most restrictive policy', () => {
    expect(fields(rateLimitHeaders(allowed))).toEqual({
      'ratelimit-limit': '10',
      'ratelimit-remaining': '6',
      'ratelimit-reset': '1',
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '6',
      'x-ratelimit-reset': '1',
    })
  })

  test('X-RateLimit-Reset in epoch seconds is never earlier than the real reset', () => {
    const headers = rateLimitHeaders(
      { ...allowed, checkedAt: T0 + 1 },
      { xRateLimitReset: 'epoch-seconds' },
    )
    // the check ran at 1_700_000_000.001 s; one second later is at most 1_700_000_002
    expect(headers.get('x-ratelimit-reset')).toBe('1700000002')
    expect(headers.get('ratelimit-reset')).toBe('1') // always delta seconds
  })

  test('draft -10 structured fields list every policy (RFC 9651 List syntax)', () => {
    const headers = rateLimitHeaders(allowed, {
      structured: true,
      rateLimit: false,
      xRateLimit: false,
    })
    expect(fields(headers)).toEqual({
      'ratelimit-policy': '"burst";q=10;w=1, "daily";q=1000;w=86400',
      ratelimit: '"burst";r=6;t=1, "daily";r=996;t=87',
    })
  })

  test('a denied check: Retry-After, and the separate fields describe the violated policy', () => {
    const headers = rateLimitHeaders(denied)
    expect(headers.get('retry-after')).toBe('3')
    expect(headers.get('ratelimit-limit')).toBe('10')
    expect(headers.get('ratelimit-reset')).toBe('1')
  })

  test('no Retry-After when no wait can help (the cost exceeds a quota)', () => {
    expect(rateLimitHeaders({ ...denied, retryAfterSeconds: Infinity }).has('retry-after')).toBe(
      false,
    )
  })

  test('names with quotes and backslashes are escaped in the structured fields', () => {
    const result = { ...allowed, policies: [status({ name: 'a "b" \\c' })] }
    const headers = rateLimitHeaders(result, { structured: true })
    expect(headers.get('ratelimit-policy')).toBe('"a \\"b\\" \\\\c";q=10;w=1')
    expect(parseRateLimitFields(headers).policies[0]?.name).toBe('a "b" \\c')
  })
})

describe('mostRestrictivePolicy', () => {
  test('fewest remaining wins; then the later reset; then the first configured', () => {
    const pick = (...policies: RateLimitPolicyStatus[]) =>
      mostRestrictivePolicy({ ...allowed, policies }).name
    expect(pick(status({ name: 'a', remaining: 5 }), status({ name: 'b', remaining: 3 }))).toBe('b')
    expect(
      pick(
        status({ name: 'a', remaining: 3, resetSeconds: 2 }),
        status({ name: 'b', remaining: 3, resetSeconds: 9 }),
      ),
    ).toBe('b')
    expect(pick(status({ name: 'a', remaining: 3 }), status({ name: 'b', remaining: 3 }))).toBe('a')
  })

  test('a violated policy wins over one with fewer remaining units', () => {
    const pick = mostRestrictivePolicy({
      ...denied,
      policies: [
        status({ name: 'tight', remaining: 0, resetSeconds: 50 }),
        status({ name: 'violated', remaining: 2, resetSeconds: 1, violated: true }),
      ],
    })
    expect(pick.name).toBe('violated')
  })
})

describe('mergeRateLimitHeaders: merge, never overwrite', () => {
  test('a separate-field group already present is left as it is', () => {
    const headers = new Headers({ 'RateLimit-Remaining': '0', 'X-RateLimit-Limit': '5' })
    mergeRateLimitHeaders(headers, allowed)
    expect(fields(headers)).toEqual({ 'ratelimit-remaining': '0', 'x-ratelimit-limit': '5' })
  })

  test('structured members are appended for policies not listed yet', () => {
    const headers = new Headers({ RateLimit: '"route";r=1;t=5, "burst";r=0;t=1' })
    mergeRateLimitHeaders(headers, allowed, { structured: true })
    const { limits } = parseRateLimitFields(headers)
    expect(limits.map((limit) => [limit.name, limit.remaining])).toEqual([
      ['route', 1],
      ['burst', 0],
      ['daily', 996],
    ])
  })

  test('an existing Retry-After is kept', () => {
    const headers = new Headers({ 'Retry-After': '120' })
    mergeRateLimitHeaders(headers, denied)
    expect(headers.get('retry-after')).toBe('120')
  })

  test('exposeHeaders merges the names into Access-Control-Expose-Headers', () => {
    const headers = new Headers({ 'Access-Control-Expose-Headers': 'ETag, ratelimit-limit' })
    mergeRateLimitHeaders(headers, allowed, { exposeHeaders: true, xRateLimit: false })
    expect(headers.get('access-control-expose-headers')).toBe(
      'ETag, ratelimit-limit, RateLimit-Remaining, RateLimit-Reset',
    )
    const star = new Headers({ 'Access-Control-Expose-Headers': '*' })
    mergeRateLimitHeaders(star, allowed, { exposeHeaders: true })
    expect(star.get('access-control-expose-headers')).toBe('*')
  })
})

/** Results from the real algorithm: a key's checks over random policies and times. */
const resultsArb = fc
  .tuple(
    fc.uniqueArray(
      fc.record({
        name: fc.string({
          minLength: 1,
          maxLength: 12,
          unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
        }),
        quota: fc.integer({ min: 1, max: 20 }),
        windowSeconds: fc.integer({ min: 1, max: 600 }),
      }),
      { selector: (p) => p.name, minLength: 1, maxLength: 3 },
    ),
    fc.array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 6 })), {
      minLength: 1,
      maxLength: 30,
    }),
  )
  .map(([raw, steps]) => {
    const policies = compilePolicies(raw)
    let states: readonly (GcraState | undefined)[] = []
    let now = T0
    return steps.map(([dt, cost]) => {
      now += dt
      const check = { key: 'k', policies, cost, now }
      const outcome = gcraCheck(states, check)
      if (outcome.changed) states = outcome.states
      return describeGcra(check, outcome)
    })
  })

describe('headers: properties over real results', () => {
  test('MUST: Retry-After is never earlier than the reset of a violated policy (draft -10 §6)', () => {
    fc.assert(
      fc.property(resultsArb, (results) => {
        for (const result of results) {
          const headers = rateLimitHeaders(result, { structured: true })
          if (result.allowed || !Number.isFinite(result.retryAfterSeconds)) {
            expect(headers.has('retry-after')).toBe(false)
            continue
          }
          const retryAfter = Number(headers.get('retry-after'))
          expect(retryAfter).toBeGreaterThanOrEqual(Number(headers.get('ratelimit-reset')))
          const { limits } = parseRateLimitFields(headers)
          for (const policy of result.policies.filter((p) => p.violated)) {
            const limit = limits.find((l) => l.name === policy.name)
            expect(retryAfter).toBeGreaterThanOrEqual(limit!.resetSeconds!)
          }
        }
      }),
      timeBox,
    )
  })

  test('the structured fields parse back to the result', () => {
    fc.assert(
      fc.property(resultsArb, (results) => {
        for (const result of results) {
          const parsed = parseRateLimitFields(rateLimitHeaders(result, { structured: true }))
          expect(parsed.policies).toEqual(
            result.policies.map((p) => ({
              name: p.name,
              quota: p.quota,
              quotaUnit: 'requests',
              windowSeconds: p.windowSeconds,
            })),
          )
          expect(parsed.limits).toEqual(
            result.policies.map((p) => ({
              name: p.name,
              remaining: p.remaining,
              resetSeconds: p.resetSeconds,
            })),
          )
        }
      }),
      timeBox,
    )
  })

  test('every value written is a non-negative integer', () => {
    fc.assert(
      fc.property(resultsArb, (results) => {
        for (const result of results) {
          const headers = rateLimitHeaders(result, { xRateLimitReset: 'epoch-seconds' })
          for (const [, value] of headers) expect(value).toMatch(/^\d+$/)
        }
      }),
      timeBox,
    )
  })
})

describe('parseRateLimitFields', () => {
  test('draft -10 examples (§3.2, §4.2)', () => {
    const headers = new Headers()
    headers.append('RateLimit-Policy', '"permin";q=50;w=60,"perhr";q=1000;w=3600')
    headers.append(
      'RateLimit-Policy',
      '"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:',
    )
    headers.set('RateLimit', '"default";r=300000000;t=60;pk=:QXBwLTk5OQ==:')
    const { policies, limits } = parseRateLimitFields(headers)
    expect(policies.map((p) => [p.name, p.quota, p.quotaUnit, p.windowSeconds])).toEqual([
      ['permin', 50, 'requests', 60],
      ['perhr', 1000, 'requests', 3600],
      ['peruser', 65535, 'content-bytes', 10],
    ])
    expect(limits).toEqual([
      {
        name: 'default',
        remaining: 300_000_000,
        resetSeconds: 60,
        partitionKey: new TextEncoder().encode('App-999'),
      },
    ])
  })

  test('members without their required parameter are skipped; an invalid field is ignored whole', () => {
    const headers = new Headers({
      'RateLimit-Policy': '"a";w=1, "b";q=2, "c";q=-1, 7;q=1',
      RateLimit: '"x";r=1, "y";t=2, "z";r=1.5,',
    })
    const { policies, limits } = parseRateLimitFields(headers)
    expect(policies.map((p) => p.name)).toEqual(['b'])
    expect(limits).toEqual([])
  })

  test('never throws, whatever the field values', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ unit: fc.constantFrom(...'"\\;=:,()?@%-.1rtqwpk ') }),
        (a, b) => {
          const headers = new Headers()
          try {
            headers.set('RateLimit-Policy', a)
            headers.set('RateLimit', b)
          } catch {
            return // not a valid header value at all
          }
          const parsed = parseRateLimitFields(headers)
          expect(Array.isArray(parsed.policies) && Array.isArray(parsed.limits)).toBe(true)
        },
      ),
      timeBox,
    )
  })
})
