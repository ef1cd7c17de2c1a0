import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { EntityTag } from './entity-tag.ts'
import {
  MAX_CONDITIONAL_HEADER_LENGTH,
  MAX_ENTITY_TAGS,
  parseEntityTag,
  parseEntityTagList,
  strongCompare,
  weakCompare,
} from './entity-tag.ts'
import type { EvaluateOptions, Validators } from './evaluate.ts'
import { evaluatePreconditions } from './evaluate.ts'
import { parseHttpDate } from './http-date.ts'
import type { PreconditionResult } from './outcome.ts'

const budget = { interruptAfterTimeLimit: 2000 }

// The resource: version 2, last changed at 2026-01-01T12:00:00.400Z (sub-second on purpose).
const CHANGED = Date.UTC(2026, 0, 1, 12, 0, 0) + 400
const resource: Validators = { etag: '"v2"', lastModified: CHANGED }
const AT_CHANGE = 'Thu, 01 Jan 2026 12:00:00 GMT'
const BEFORE = 'Wed, 31 Dec 2025 12:00:00 GMT'
const AFTER = 'Fri, 02 Jan 2026 12:00:00 GMT'

function evaluate(
  method: string,
  headers: Record<string, string>,
  validators: Validators = resource,
  options?: EvaluateOptions,
): PreconditionResult {
  return evaluatePreconditions(method, new Headers(headers), validators, options)
}
const outcome = (...args: Parameters<typeof evaluate>) => evaluate(...args).outcome

const proceed = { outcome: 'proceed', ignoreRange: false }

describe('RFC 9110 §13.2.1: when preconditions are evaluated', () => {
  test.each(['OPTIONS', 'CONNECT', 'TRACE'])(
    'MUST ignore the conditional fields on %s',
    (method) => {
      expect(evaluate(method, { 'if-match': '"stale"', 'if-none-match': '"v2"' })).toEqual(proceed)
    },
  )

  test('a GET of a missing resource proceeds, so the handler answers 404 and never a 304', () => {
    // The caller evaluates after the lookup; exists:false can never produce a 304, whatever
    // the client sends, so the 404 the handler would answer takes precedence.
    const missing = { exists: false }
    expect(outcome('GET', { 'if-none-match': '*' }, missing)).toBe('proceed')
    expect(outcome('GET', { 'if-none-match': '"v2"' }, missing)).toBe('proceed')
    expect(outcome('GET', { 'if-modified-since': AFTER }, missing)).toBe('proceed')
  })
})

describe('RFC 9110 §13.2.2 step 1: If-Match (strong comparison, §13.1.1)', () => {
  test('a matching tag proceeds', () => {
    expect(evaluate('PUT', { 'if-match': '"v2"' })).toEqual(proceed)
  })

  test('a list with the current tag proceeds (the RFC example list shape)', () => {
    expect(outcome('PUT', { 'if-match': '"xyzzy", "v2", "c3piozzzz"' })).toBe('proceed')
  })

  test('MUST NOT perform the method when no tag matches: 412', () => {
    expect(evaluate('PUT', { 'if-match': '"v1"' })).toMatchObject({
      outcome: 'precondition-failed',
      field: 'If-Match',
    })
  })

  test('MUST use the strong comparison: a weak tag never matches', () => {
    expect(outcome('PUT', { 'if-match': 'W/"v2"' })).toBe('precondition-failed')
    expect(outcome('PUT', { 'if-match': 'W/"v2"' }, { etag: 'W/"v2"' })).toBe('precondition-failed')
    expect(outcome('PUT', { 'if-match': '"v2"' }, { etag: 'W/"v2"' })).toBe('precondition-failed')
  })

  test('MUST use the strong comparison whatever the options: there is no weak opt-in', () => {
    // The weakIfMatch option of before issue 13 is gone; an options object that still carries
    // it changes nothing. (Compressed forms have strong tags of their own now: see compress()
    // of @api-blocks/http.)
    const legacy = { weakIfMatch: true } as EvaluateOptions
    expect(outcome('PUT', { 'if-match': 'W/"v2"' }, resource, legacy)).toBe('precondition-failed')
    expect(outcome('PUT', { 'if-match': '"v2"' }, { etag: 'W/"v2"' }, legacy)).toBe(
      'precondition-failed',
    )
    expect(outcome('PUT', { 'if-match': 'W/"v2"' }, { etag: 'W/"v2"' }, legacy)).toBe(
      'precondition-failed',
    )
    expect(outcome('PUT', { 'if-match': '"v2"' }, resource, legacy)).toBe('proceed')
  })

  test('"*" is true when the resource has a current representation', () => {
    expect(outcome('PUT', { 'if-match': '*' })).toBe('proceed')
    expect(outcome('PUT', { 'if-match': '*' }, {})).toBe('proceed')
  })

  test('"*" is false when the resource does not exist (exists: false)', () => {
    expect(outcome('PUT', { 'if-match': '*' }, { exists: false })).toBe('precondition-failed')
    expect(outcome('PUT', { 'if-match': '"v2"' }, { ...resource, exists: false })).toBe(
      'precondition-failed',
    )
  })

  test('a resource without a tag matches no listed tag', () => {
    expect(outcome('DELETE', { 'if-match': '"v2"' }, { lastModified: CHANGED })).toBe(
      'precondition-failed',
    )
  })

  test.each([
    ['an unquoted tag', 'v2'],
    ['a list with a malformed member after the match', '"v2", v3'],
    ['"*" mixed with tags', '*, "v2"'],
    ['an empty value', ''],
    ['too many tags', Array.from({ length: MAX_ENTITY_TAGS + 1 }, () => '"v2"').join(',')],
    ['a value over the length limit', `"v2"${', '.repeat(MAX_CONDITIONAL_HEADER_LENGTH / 2)}`],
  ])('%s matches nothing: 412 ("otherwise, the condition is false")', (_, value) => {
    expect(outcome('PUT', { 'if-match': value })).toBe('precondition-failed')
  })

  test('when true, step 2 is skipped: If-Unmodified-Since is not evaluated', () => {
    expect(outcome('PUT', { 'if-match': '"v2"', 'if-unmodified-since': BEFORE })).toBe('proceed')
  })

  test('when true, evaluation continues with step 3 (If-None-Match)', () => {
    expect(outcome('PUT', { 'if-match': '"v2"', 'if-none-match': '"v2"' })).toBe(
      'precondition-failed',
    )
    expect(outcome('GET', { 'if-match': '"v2"', 'if-none-match': '"v2"' })).toBe('not-modified')
  })

  test('applies to GET too (412, never 304)', () => {
    expect(outcome('GET', { 'if-match': '"v1"' })).toBe('precondition-failed')
  })
})

describe('RFC 9110 §13.2.2 step 2: If-Unmodified-Since (§13.1.4)', () => {
  test('not modified since the date: proceeds', () => {
    expect(outcome('PUT', { 'if-unmodified-since': AFTER })).toBe('proceed')
  })

  test('MUST NOT perform the method when modified after the date: 412', () => {
    expect(evaluate('PUT', { 'if-unmodified-since': BEFORE })).toMatchObject({
      outcome: 'precondition-failed',
      field: 'If-Unmodified-Since',
    })
  })

  test('compares at one-second granularity: a change within the same second is not later', () => {
    expect(outcome('PUT', { 'if-unmodified-since': AT_CHANGE })).toBe('proceed')
  })

  test('MUST ignore it when If-Match is present', () => {
    expect(outcome('PUT', { 'if-match': '*', 'if-unmodified-since': BEFORE })).toBe('proceed')
    expect(evaluate('PUT', { 'if-match': '"v1"', 'if-unmodified-since': AFTER })).toMatchObject({
      field: 'If-Match',
    })
  })

  test.each([
    ['not an HTTP-date', '2025-12-31T12:00:00Z'],
    ['a list of dates', `${BEFORE}, ${BEFORE}`],
    ['garbage', 'yesterday'],
  ])('MUST ignore a value that is %s', (_, value) => {
    expect(outcome('PUT', { 'if-unmodified-since': value })).toBe('proceed')
  })

  test('MUST ignore it when the resource has no modification date', () => {
    expect(outcome('PUT', { 'if-unmodified-since': BEFORE }, { etag: '"v2"' })).toBe('proceed')
  })
})

describe('RFC 9110 §13.2.2 step 3: If-None-Match (weak comparison, §13.1.2)', () => {
  test.each(['GET', 'HEAD'])('a match on %s MUST answer 304', (method) => {
    expect(evaluate(method, { 'if-none-match': '"v2"' })).toEqual({
      outcome: 'not-modified',
      field: 'If-None-Match',
    })
  })

  test('MUST use the weak comparison: W/"v2" matches "v2" and the other way round', () => {
    expect(outcome('GET', { 'if-none-match': 'W/"v2"' })).toBe('not-modified')
    expect(outcome('GET', { 'if-none-match': '"v2"' }, { etag: 'W/"v2"' })).toBe('not-modified')
  })

  test('a tag anywhere in the list matches', () => {
    expect(outcome('GET', { 'if-none-match': 'W/"xyzzy", W/"v2", W/"c3piozzzz"' })).toBe(
      'not-modified',
    )
  })

  test('no match: proceeds (a full 200)', () => {
    expect(outcome('GET', { 'if-none-match': '"xyzzy", "r2d2xxxx"' })).toBe('proceed')
  })

  test.each(['PUT', 'PATCH', 'DELETE', 'POST'])('a match on %s MUST answer 412', (method) => {
    expect(evaluate(method, { 'if-none-match': '"v2"' })).toMatchObject({
      outcome: 'precondition-failed',
      field: 'If-None-Match',
    })
  })

  test('"*" on GET of an existing resource: 304', () => {
    expect(outcome('GET', { 'if-none-match': '*' })).toBe('not-modified')
  })

  test('"*" on PUT: 412 when the resource exists, proceeds when it does not (create once)', () => {
    expect(outcome('PUT', { 'if-none-match': '*' })).toBe('precondition-failed')
    expect(outcome('PUT', { 'if-none-match': '*' }, { exists: false })).toBe('proceed')
  })

  test('a tag list on a resource that does not exist is true', () => {
    expect(outcome('PUT', { 'if-none-match': '"v2"' }, { ...resource, exists: false })).toBe(
      'proceed',
    )
  })

  test.each([
    ['an unquoted tag', 'v2'],
    ['a malformed member', '"v2", v2'],
    ['too many tags', Array.from({ length: MAX_ENTITY_TAGS + 1 }, () => '"v2"').join(',')],
  ])('%s: GET gets the full response (never a wrong 304)', (_, value) => {
    expect(outcome('GET', { 'if-none-match': value })).toBe('proceed')
  })

  test.each([
    ['an unquoted tag', 'v2'],
    ['"*" mixed with tags', '*, "v3"'],
  ])('%s: a write is refused with 412 rather than performed unchecked', (_, value) => {
    expect(evaluate('PUT', { 'if-none-match': value })).toMatchObject({
      outcome: 'precondition-failed',
      field: 'If-None-Match',
    })
  })

  test('MUST ignore If-Modified-Since when If-None-Match is present', () => {
    expect(outcome('GET', { 'if-none-match': '"v1"', 'if-modified-since': AFTER })).toBe('proceed')
    expect(outcome('GET', { 'if-none-match': '"v2"', 'if-modified-since': BEFORE })).toBe(
      'not-modified',
    )
  })

  test('a request Cache-Control: no-cache does not turn a match into a 200 (unlike fresh)', () => {
    expect(outcome('GET', { 'if-none-match': '"v2"', 'cache-control': 'no-cache' })).toBe(
      'not-modified',
    )
  })
})

describe('RFC 9110 §13.2.2 step 4: If-Modified-Since (§13.1.3)', () => {
  test('not modified since the date: 304', () => {
    expect(evaluate('GET', { 'if-modified-since': AFTER })).toEqual({
      outcome: 'not-modified',
      field: 'If-Modified-Since',
    })
    expect(outcome('HEAD', { 'if-modified-since': AFTER })).toBe('not-modified')
  })

  test('modified since the date: proceeds', () => {
    expect(outcome('GET', { 'if-modified-since': BEFORE })).toBe('proceed')
  })

  test('compares at one-second granularity: the Last-Modified value itself gives 304', () => {
    expect(outcome('GET', { 'if-modified-since': AT_CHANGE })).toBe('not-modified')
  })

  test('accepts the obsolete formats (RFC 850, asctime)', () => {
    const options = { clock: () => Date.UTC(2026, 5, 1) }
    expect(
      outcome('GET', { 'if-modified-since': 'Friday, 02-Jan-26 12:00:00 GMT' }, resource, options),
    ).toBe('not-modified')
    expect(outcome('GET', { 'if-modified-since': 'Fri Jan  2 12:00:00 2026' })).toBe('not-modified')
  })

  test('uses the injected clock to place RFC 850 two-digit years', () => {
    // In 2026, "76" is 2076 (not more than 50 years ahead): 6 Nov 2076 is a Friday, the date
    // is valid and later than the change, so 304. In 2025, "76" is 1976, a Saturday: the day
    // name contradicts the date, the field is invalid and ignored, so the request proceeds.
    const at = (year: number) => ({ clock: () => Date.UTC(year, 0, 1) })
    const seventySix = { 'if-modified-since': 'Friday, 06-Nov-76 08:49:37 GMT' }
    expect(outcome('GET', seventySix, resource, at(2026))).toBe('not-modified')
    expect(outcome('GET', seventySix, resource, at(2025))).toBe('proceed')
  })

  test.each(['PUT', 'POST', 'DELETE', 'PATCH'])('MUST ignore it on %s', (method) => {
    expect(outcome(method, { 'if-modified-since': AFTER })).toBe('proceed')
  })

  test.each([
    ['not an HTTP-date', '2026-01-02'],
    ['more than one member', `${AFTER}, ${AFTER}`],
  ])('MUST ignore a value that is %s', (_, value) => {
    expect(outcome('GET', { 'if-modified-since': value })).toBe('proceed')
  })

  test('MUST ignore it when the resource has no modification date', () => {
    expect(outcome('GET', { 'if-modified-since': AFTER }, { etag: '"v2"' })).toBe('proceed')
  })
})

describe('RFC 9110 §13.2.2 step 5: Range and If-Range (§13.1.5, §14.2)', () => {
  const range = { range: 'bytes=0-99' }

  test('Range without If-Range may be served', () => {
    expect(evaluate('GET', range)).toEqual(proceed)
  })

  test('If-Range with the current strong tag: the range may be served (206)', () => {
    expect(evaluate('GET', { ...range, 'if-range': '"v2"' })).toEqual(proceed)
  })

  test('If-Range with another tag: ignore Range, answer the full 200', () => {
    expect(evaluate('GET', { ...range, 'if-range': '"v1"' })).toEqual({
      outcome: 'proceed',
      ignoreRange: true,
    })
  })

  test('MUST use the strong comparison: a weak tag is false', () => {
    expect(evaluate('GET', { ...range, 'if-range': 'W/"v2"' }).outcome).toBe('proceed')
    expect(evaluate('GET', { ...range, 'if-range': 'W/"v2"' })).toHaveProperty('ignoreRange', true)
    expect(evaluate('GET', { ...range, 'if-range': '"v2"' }, { etag: 'W/"v2"' })).toHaveProperty(
      'ignoreRange',
      true,
    )
  })

  test('an HTTP-date is treated as a weak validator (§8.8.2.2): ignore Range', () => {
    expect(evaluate('GET', { ...range, 'if-range': AT_CHANGE })).toHaveProperty('ignoreRange', true)
  })

  test('MUST ignore If-Range without Range', () => {
    expect(evaluate('GET', { 'if-range': '"v1"' })).toEqual(proceed)
  })

  test('Range on a method other than GET MUST be ignored', () => {
    expect(evaluate('HEAD', range)).toHaveProperty('ignoreRange', true)
    expect(evaluate('PUT', range)).toHaveProperty('ignoreRange', true)
  })

  test('runs only after steps 1-4 passed', () => {
    expect(outcome('GET', { ...range, 'if-range': '"v2"', 'if-none-match': '"v2"' })).toBe(
      'not-modified',
    )
  })
})

describe('RFC 9110 §13.2.2 step 6: otherwise, perform the method', () => {
  test('an unconditional request proceeds', () => {
    expect(evaluate('GET', {})).toEqual(proceed)
    expect(evaluate('PUT', {})).toEqual(proceed)
  })

  test('every precondition true: proceeds', () => {
    const all = {
      'if-match': '"v2"',
      'if-none-match': '"v1"',
      'if-modified-since': AFTER,
      'if-unmodified-since': BEFORE,
    }
    expect(evaluate('PUT', all)).toEqual(proceed)
    expect(evaluate('GET', { ...all, range: 'bytes=0-9', 'if-range': '"v2"' })).toEqual(proceed)
  })
})

describe('RFC 6585 §3: 428 Precondition Required (requireIfMatch)', () => {
  const required = { requireIfMatch: true }

  test.each(['PUT', 'PATCH', 'DELETE'])('%s without If-Match: 428', (method) => {
    expect(outcome(method, {}, resource, required)).toBe('precondition-required')
  })

  test('POST and GET are not required by default', () => {
    expect(outcome('POST', {}, resource, required)).toBe('proceed')
    expect(outcome('GET', {}, resource, required)).toBe('proceed')
  })

  test('with If-Match, evaluation is the usual one', () => {
    expect(outcome('PUT', { 'if-match': '"v2"' }, resource, required)).toBe('proceed')
    expect(outcome('PUT', { 'if-match': '"v1"' }, resource, required)).toBe('precondition-failed')
  })

  test('If-Unmodified-Since alone does not satisfy it (dates cannot tell two writes in a second apart)', () => {
    expect(outcome('PUT', { 'if-unmodified-since': AFTER }, resource, required)).toBe(
      'precondition-required',
    )
  })

  test('If-None-Match: * satisfies it, so a PUT can create', () => {
    expect(outcome('PUT', { 'if-none-match': '*' }, { exists: false }, required)).toBe('proceed')
    expect(outcome('PUT', { 'if-none-match': ' * ' }, resource, required)).toBe(
      'precondition-failed',
    )
    expect(outcome('PUT', { 'if-none-match': '"v1"' }, resource, required)).toBe(
      'precondition-required',
    )
  })

  test('the methods are configurable', () => {
    const onlyPost = { requireIfMatch: ['POST'] }
    expect(outcome('POST', {}, resource, onlyPost)).toBe('precondition-required')
    expect(outcome('PUT', {}, resource, onlyPost)).toBe('proceed')
    expect(outcome('PUT', {}, resource, { requireIfMatch: false })).toBe('proceed')
  })
})

describe('inputs', () => {
  test('a Node-style header record works, arrays joined as a list', () => {
    const headers = { 'if-none-match': ['"v1"', '"v2"'] }
    expect(evaluatePreconditions('GET', headers, resource).outcome).toBe('not-modified')
    expect(evaluatePreconditions('GET', { 'if-none-match': '"v2"' }, resource).outcome).toBe(
      'not-modified',
    )
  })

  test('repeated Headers fields are combined as a list', () => {
    const headers = new Headers()
    headers.append('if-match', '"v1"')
    headers.append('if-match', '"v2"')
    expect(evaluatePreconditions('PUT', headers, resource).outcome).toBe('proceed')
  })

  test('validators may be a parsed tag and a Date', () => {
    const validators = { etag: { weak: false, opaque: 'v2' }, lastModified: new Date(CHANGED) }
    expect(outcome('PUT', { 'if-match': '"v2"' }, validators)).toBe('proceed')
    expect(outcome('GET', { 'if-modified-since': AFTER }, validators)).toBe('not-modified')
  })

  test('a validator that is not an entity tag is a programming error, on every request', () => {
    expect(() => evaluate('GET', {}, { etag: 'v2' })).toThrow(TypeError)
  })

  test('alternating validators are each located afresh (no stale cached bounds)', () => {
    const a = { etag: '"aaaa"' }
    const b = { etag: 'W/"bb"' }
    for (let i = 0; i < 3; i++) {
      expect(outcome('PUT', { 'if-match': '"aaaa"' }, a)).toBe('proceed')
      expect(outcome('PUT', { 'if-match': '"bb"' }, b)).toBe('precondition-failed')
      expect(outcome('GET', { 'if-none-match': '"bb"' }, b)).toBe('not-modified')
      expect(() => evaluate('GET', {}, { etag: 'aaaa' })).toThrow(TypeError)
    }
  })

  test('an invalid lastModified counts as none', () => {
    expect(outcome('GET', { 'if-modified-since': AFTER }, { lastModified: Number.NaN })).toBe(
      'proceed',
    )
  })
})

describe('properties', () => {
  const fields = [
    'if-match',
    'if-none-match',
    'if-modified-since',
    'if-unmodified-since',
    'range',
    'if-range',
  ] as const
  const headerValue = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.constantFrom('*', '"v2"', 'W/"v2"', '"v1", "v2"', AFTER, BEFORE, 'bytes=0-1', ''),
  )
  const headers = fc.dictionary(fc.constantFrom(...fields), headerValue)
  const method = fc.oneof(
    fc.constantFrom('GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE', 'OPTIONS'),
    fc.string({ maxLength: 8 }),
  )
  const validators = fc.record(
    {
      etag: fc.constantFrom('"v2"', 'W/"v2"', '""'),
      lastModified: fc.integer({ min: 0, max: 4_102_444_800_000 }),
      exists: fc.boolean(),
    },
    { requiredKeys: [] },
  )
  const options = fc.record(
    { requireIfMatch: fc.boolean(), clock: fc.constant(() => CHANGED) },
    { requiredKeys: [] },
  )

  test('never throws for any header values, and answers one of the four outcomes', () => {
    fc.assert(
      fc.property(method, headers, validators, options, (m, h, v, o) => {
        const result = evaluatePreconditions(m, h, v, o)
        expect([
          'proceed',
          'not-modified',
          'precondition-failed',
          'precondition-required',
        ]).toContain(result.outcome)
      }),
      budget,
    )
  })

  test('304 only ever answers GET or HEAD; 428 only when required', () => {
    fc.assert(
      fc.property(method, headers, validators, options, (m, h, v, o) => {
        const result = evaluatePreconditions(m, h, v, o)
        if (result.outcome === 'not-modified') expect(['GET', 'HEAD']).toContain(m)
        if (result.outcome === 'precondition-required') expect(o.requireIfMatch).toBe(true)
      }),
      budget,
    )
  })

  // A plain transcription of RFC 9110 §13.2.2, built from the public parsers, with none of
  // the fast paths: evaluatePreconditions must always agree with it.
  function reference(
    m: string,
    h: Record<string, string>,
    v: { etag?: string; lastModified?: number; exists?: boolean },
    o: { requireIfMatch?: boolean },
  ): PreconditionResult['outcome'] {
    if (['OPTIONS', 'CONNECT', 'TRACE'].includes(m)) return 'proceed'
    const exists = v.exists !== false
    const getOrHead = m === 'GET' || m === 'HEAD'
    const current: EntityTag | undefined = exists && v.etag ? parseEntityTag(v.etag) : undefined
    const lastModified =
      exists && v.lastModified !== undefined ? Math.floor(v.lastModified / 1000) * 1000 : undefined
    const im = h['if-match']
    const inm = h['if-none-match']
    const inmList = inm === undefined ? undefined : parseEntityTagList(inm)
    if (
      o.requireIfMatch &&
      ['PUT', 'PATCH', 'DELETE'].includes(m) &&
      im === undefined &&
      inmList?.kind !== 'any'
    ) {
      return 'precondition-required'
    }
    if (im !== undefined) {
      const list = parseEntityTagList(im)
      const holds =
        exists &&
        (list.kind === 'any' ||
          (list.kind === 'tags' &&
            current !== undefined &&
            list.tags.some((t) => strongCompare(t, current))))
      if (!holds) return 'precondition-failed'
    } else if (h['if-unmodified-since'] !== undefined && lastModified !== undefined) {
      const since = parseHttpDate(h['if-unmodified-since'], { now: CHANGED })
      if (since !== undefined && lastModified > since) return 'precondition-failed'
    }
    if (inmList !== undefined) {
      if (inmList.kind === 'invalid') {
        if (!getOrHead) return 'precondition-failed'
      } else {
        const matches =
          inmList.kind === 'any'
            ? exists
            : current !== undefined && inmList.tags.some((t) => weakCompare(t, current))
        if (matches) return getOrHead ? 'not-modified' : 'precondition-failed'
      }
    } else if (getOrHead && h['if-modified-since'] !== undefined && lastModified !== undefined) {
      const since = parseHttpDate(h['if-modified-since'], { now: CHANGED })
      if (since !== undefined && lastModified <= since) return 'not-modified'
    }
    return 'proceed'
  }

  test('agrees with a plain transcription of §13.2.2 (no fast paths, no caching)', () => {
    const tagValue = fc.constantFrom('"v2"', 'W/"v2"', '"v1"', '""', '"v2 "', 'v2', '*', ' "v2"')
    const listValue = fc.oneof(
      tagValue,
      fc.array(tagValue, { minLength: 1, maxLength: 4 }).map((tags) => tags.join(', ')),
      fc.string({ maxLength: 20 }),
    )
    const dateValue = fc.constantFrom(AFTER, BEFORE, AT_CHANGE, 'garbage')
    const requestHeaders = fc.record(
      {
        'if-match': listValue,
        'if-none-match': listValue,
        'if-modified-since': dateValue,
        'if-unmodified-since': dateValue,
      },
      { requiredKeys: [] },
    )
    const validatorsOf = fc.record(
      {
        etag: fc.constantFrom('"v2"', 'W/"v2"', '""', '"v1"'),
        lastModified: fc.constantFrom(CHANGED, CHANGED - 86_400_000, CHANGED + 86_400_000),
        exists: fc.boolean(),
      },
      { requiredKeys: [] },
    )
    fc.assert(
      fc.property(
        fc.constantFrom('GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'POST', 'OPTIONS'),
        requestHeaders,
        validatorsOf,
        fc.record({ requireIfMatch: fc.boolean() }, { requiredKeys: [] }),
        (m, h, v, o) => {
          const expected = reference(m, h, v, o)
          const clock = () => CHANGED
          expect(evaluatePreconditions(m, h, v, { ...o, clock }).outcome).toBe(expected)
          expect(evaluatePreconditions(m, new Headers(h), v, { ...o, clock }).outcome).toBe(
            expected,
          )
          // The same validator as a parsed tag (no string fast paths) gives the same answer.
          const parsed = v.etag === undefined ? undefined : parseEntityTag(v.etag)
          expect(evaluatePreconditions(m, h, { ...v, etag: parsed }, { ...o, clock }).outcome).toBe(
            expected,
          )
        },
      ),
      { interruptAfterTimeLimit: 3000, numRuns: 3000 },
    )
  })

  test('a write whose If-Match could not be satisfied never proceeds', () => {
    fc.assert(
      fc.property(headerValue, validators, (ifMatch, v) => {
        const result = evaluatePreconditions('PUT', { 'if-match': ifMatch }, v)
        const tag = v.exists === false ? undefined : v.etag
        const listed = ifMatch.trim() === '*' || (tag?.startsWith('"') && ifMatch.includes(tag))
        if (!listed) expect(result.outcome).toBe('precondition-failed')
      }),
      budget,
    )
  })
})
