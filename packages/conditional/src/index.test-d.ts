import type { Middleware } from '@api-blocks/core'
import { describe, expectTypeOf, test } from 'vitest'
import type {
  EntityTag,
  HeaderSource,
  PreconditionErrorCode,
  PreconditionFailed,
  PreconditionField,
  PreconditionNotModified,
  PreconditionRequired,
  PreconditionResult,
} from './index.ts'
import {
  bodyEtag,
  cacheControlPresets,
  checkPreconditions,
  etagFromBody,
  evaluatePreconditions,
  PreconditionError,
  parseEntityTag,
  parseEntityTagList,
  toPreconditionResponse,
} from './index.ts'

declare const request: Request

describe('public types of @api-blocks/conditional', () => {
  test('evaluatePreconditions answers a union that narrows on outcome', () => {
    const result = evaluatePreconditions('GET', request.headers, { etag: '"7"' })
    expectTypeOf(result).toEqualTypeOf<PreconditionResult>()
    if (result.outcome === 'proceed') {
      expectTypeOf(result.ignoreRange).toEqualTypeOf<boolean>()
      // @ts-expect-error: proceed carries no detail
      void result.detail
    } else if (result.outcome === 'not-modified') {
      expectTypeOf(result).toEqualTypeOf<PreconditionNotModified>()
      expectTypeOf(result.field).toEqualTypeOf<'If-None-Match' | 'If-Modified-Since'>()
    } else if (result.outcome === 'precondition-failed') {
      expectTypeOf(result).toEqualTypeOf<PreconditionFailed>()
      expectTypeOf(result.field).toExtend<PreconditionField>()
      expectTypeOf(result.detail).toEqualTypeOf<string>()
    } else {
      expectTypeOf(result).toEqualTypeOf<PreconditionRequired>()
    }
  })

  test('every outcome but proceed has a response; proceed does not', () => {
    const result = evaluatePreconditions('PUT', {}, {}, { requireIfMatch: true })
    if (result.outcome !== 'proceed') {
      expectTypeOf(toPreconditionResponse(result, { request })).toEqualTypeOf<Response>()
    } else {
      // @ts-expect-error: there is nothing to answer for proceed
      toPreconditionResponse(result)
    }
    expectTypeOf(checkPreconditions(request, {})).toEqualTypeOf<Response | undefined>()
  })

  test('If-Match has no weak opt-in (RFC 9110 §13.1.1: always the strong comparison)', () => {
    // @ts-expect-error: weakIfMatch was removed
    evaluatePreconditions('PUT', {}, {}, { weakIfMatch: true })
    // @ts-expect-error: weakIfMatch was removed
    checkPreconditions(request, {}, { weakIfMatch: true })
  })

  test('PreconditionError takes a 412 or 428 outcome and narrows its code', () => {
    const result = evaluatePreconditions('PUT', {}, {}, { requireIfMatch: true })
    if (result.outcome === 'precondition-failed' || result.outcome === 'precondition-required') {
      const error = new PreconditionError(result)
      expectTypeOf(error.code).toEqualTypeOf<PreconditionErrorCode>()
      expectTypeOf(error.result).toEqualTypeOf<PreconditionFailed | PreconditionRequired>()
    }
    if (result.outcome === 'not-modified') {
      // @ts-expect-error: a 304 is not an error
      new PreconditionError(result)
    }
    expectTypeOf<PreconditionErrorCode>().toEqualTypeOf<
      'PRECONDITION_FAILED' | 'PRECONDITION_REQUIRED'
    >()
  })

  test('header sources: Fetch Headers, anything with get, and Node-style records', () => {
    expectTypeOf<Headers>().toExtend<HeaderSource>()
    expectTypeOf<{ get(name: string): string | null }>().toExtend<HeaderSource>()
    expectTypeOf<Record<string, string | string[] | undefined>>().toExtend<HeaderSource>()
    // @ts-expect-error: header values are strings
    evaluatePreconditions('GET', { 'if-none-match': 7 }, {})
  })

  test('validators: a tag as text or parsed, a date or milliseconds', () => {
    evaluatePreconditions('GET', {}, { etag: { weak: true, opaque: 'x' }, lastModified: 0 })
    evaluatePreconditions('GET', {}, { etag: '"x"', lastModified: new Date(), exists: false })
    // @ts-expect-error: lastModified is a Date or a number
    evaluatePreconditions('GET', {}, { lastModified: '2026-01-01' })
  })

  test('entity tag parsers never throw: undefined or an invalid list instead', () => {
    expectTypeOf(parseEntityTag('"x"')).toEqualTypeOf<EntityTag | undefined>()
    const list = parseEntityTagList('"a", "b"')
    if (list.kind === 'tags') expectTypeOf(list.tags).toEqualTypeOf<readonly EntityTag[]>()
    if (list.kind === 'invalid') {
      expectTypeOf(list.reason).toEqualTypeOf<'syntax' | 'too-long' | 'too-many'>()
    }
  })

  test('etagFromBody takes any Response body and answers a Promise; bodyEtag is a Middleware', () => {
    expectTypeOf(etagFromBody('x')).toEqualTypeOf<Promise<string>>()
    expectTypeOf(etagFromBody(null)).toEqualTypeOf<Promise<string>>()
    expectTypeOf(etagFromBody(new Uint8Array(0), { weak: true })).toEqualTypeOf<Promise<string>>()
    // @ts-expect-error: a number is not a body
    etagFromBody(42)
    expectTypeOf(bodyEtag()).toEqualTypeOf<Middleware>()
  })

  test('the Cache-Control presets are literal types', () => {
    expectTypeOf(cacheControlPresets.shared).toEqualTypeOf<'no-cache'>()
    expectTypeOf(cacheControlPresets.perUser).toEqualTypeOf<'private, no-store'>()
  })
})
