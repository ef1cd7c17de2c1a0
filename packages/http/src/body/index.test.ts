import { ApiBlocksError, defineBodySlots, handOnParsedJson, setBodyLimit } from '@api-blocks/core'
import type { StandardSchemaV1 } from '@api-blocks/problem-details'
import { errorToProblemResponse, ProblemError } from '@api-blocks/problem-details'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { ContentEncodingError } from './encoding.ts'
import { DEFAULT_MAX_BODY_BYTES, readBody, readJson, readText } from './index.ts'

const url = 'https://api.example/v1/orders'
const post = (body: BodyInit | null, headers: Record<string, string> = {}) =>
  new Request(url, { method: 'POST', body, headers, duplex: 'half' } as RequestInit)

/**
 * A Request that holds its body in memory and says so through core's whole-body slot, as
 * `@api-blocks/node`'s Request does once a middleware or a framework read the body.
 */
class HoldingRequest extends Request {
  readonly held: Uint8Array
  constructor(text: string) {
    super(url, { method: 'POST', body: text, headers: { 'content-type': 'application/json' } })
    this.held = new TextEncoder().encode(text)
  }
}
defineBodySlots(HoldingRequest.prototype, {
  wholeBody() {
    return this.bodyUsed ? undefined : this.held
  },
})

/** A body stream that counts how many chunks were pulled from it. */
function countingStream(chunks: number, size: number) {
  const state = { pulled: 0, cancelled: false }
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled === chunks) return controller.close()
      state.pulled++
      controller.enqueue(new Uint8Array(size).fill(0x61))
    },
    cancel() {
      state.cancelled = true
    },
  })
  return { stream, state }
}

async function problemOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ProblemError)
  return (error as ProblemError).problem
}

describe('readBody', () => {
  test('reads a body under the limit', async () => {
    expect(new TextDecoder().decode(await readBody(post('hello'), { maxBytes: 5 }))).toBe('hello')
  })

  test('readJson takes the value a middleware handed on (core handOnParsedJson) while it describes the bytes held', async () => {
    const holding = (text: string, parsed: (request: HoldingRequest) => [Uint8Array, unknown]) => {
      const request = new HoldingRequest(text)
      const [bytes, value] = parsed(request)
      handOnParsedJson(request, bytes, value)
      return request
    }
    const value = { a: 1 }
    const fresh = holding('{"a":1}', (request) => [request.held, value])
    expect(await readJson(fresh, z.unknown())).toBe(value)
    // Describing other bytes (the body was replaced since): the body is parsed.
    const stale = holding('{"a":2}', () => [new Uint8Array(7), value])
    expect(await readJson(stale, z.unknown())).toEqual({ a: 2 })
    // The limits still hold, and the schema still runs.
    const large = holding('{"a":"xxxxxxxxxx"}', (request) => [request.held, value])
    expect(await problemOf(readJson(large, z.unknown(), { maxBytes: 10 }))).toMatchObject({
      status: 413,
    })
    const invalid = holding('{"a":"one"}', (request) => [request.held, { a: 'one' }])
    expect(await problemOf(readJson(invalid, z.object({ a: z.number() })))).toMatchObject({
      status: 422,
    })
  })

  test('a request without a body gives an empty array', async () => {
    expect(await readBody(new Request(url))).toEqual(new Uint8Array(0))
  })

  test('a body the Request holds in memory (core whole-body slot) is taken with bytes(), not streamed', async () => {
    const holding = (text: string) => {
      const request = new HoldingRequest(text)
      let streamed = false
      const body = request.body
      Object.defineProperty(request, 'body', {
        get: () => {
          streamed = true
          return body
        },
      })
      return { request, streamed: () => streamed }
    }
    const small = holding('{"a":1}')
    expect(await readJson(small.request, z.object({ a: z.number() }))).toEqual({ a: 1 })
    expect(small.streamed()).toBe(false)
    const large = holding('x'.repeat(11))
    expect(await problemOf(readBody(large.request, { maxBytes: 10 }))).toMatchObject({
      status: 413,
      max_bytes: 10,
    })
  })

  test('the default limit is 1 MiB', () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBe(1_048_576)
  })

  test('a Content-Length over the limit is refused with 413 before reading', async () => {
    const { stream, state } = countingStream(100, 1024)
    const problem = await problemOf(
      readBody(post(stream, { 'content-length': '102400' }), { maxBytes: 1000 }),
    )
    expect(problem).toMatchObject({ status: 413, max_bytes: 1000 })
    expect(state.pulled).toBeLessThanOrEqual(1)
  })

  test('without Content-Length, reading stops at the first chunk past the limit (413)', async () => {
    const { stream, state } = countingStream(1000, 1024)
    const problem = await problemOf(readBody(post(stream), { maxBytes: 4096 }))
    expect(problem).toMatchObject({ status: 413, max_bytes: 4096 })
    expect(state.pulled).toBeLessThan(10)
    expect(state.cancelled).toBe(true)
  })

  test('a malformed Content-Length MUST be treated as an unrecoverable error: 400 (RFC 9112 §6.3)', async () => {
    const problem = await problemOf(readBody(post('abc', { 'content-length': '3, 4' })))
    expect(problem.status).toBe(400)
  })

  test('a client that hangs up mid-body gives a clean 400 ProblemError', async () => {
    let sent = false
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true
          controller.enqueue(new TextEncoder().encode('{"partial":'))
        } else {
          controller.error(new TypeError('terminated: other side closed'))
        }
      },
    })
    const error = await readBody(post(stream)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProblemError)
    expect(error).toMatchObject({ status: 400, code: 'BODY_UNREADABLE' })
  })

  test('a stream failing with an ApiBlocksError keeps it and its status (REQUEST_BODY_CONSUMED is a 500, not a 400)', async () => {
    // What the node adapter's body stream fails with when Express's or Fastify's parser
    // consumed the body before the handler.
    const consumed = new ApiBlocksError(
      'REQUEST_BODY_CONSUMED',
      'A body parser consumed the request body before the handler.',
      { status: 500 },
    )
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(consumed)
      },
    })
    const request = post(stream, { 'content-type': 'application/json' })
    const error = await readJson(request, z.unknown()).catch((e: unknown) => e)
    expect(error).toBe(consumed)
    expect(errorToProblemResponse(error).status).toBe(500)
  })

  test('reading twice is a programming error: 500 BODY_ALREADY_READ, the catalog internal problem', async () => {
    const request = post('x')
    await readBody(request)
    const error = await readBody(request).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProblemError)
    expect(error).toMatchObject({ status: 500, code: 'BODY_ALREADY_READ' })
    expect((error as ProblemError).problem.type).toBe('internal')
  })

  test('the failures carry the reader code; the 413 its limit', async () => {
    const tooLarge = await readBody(post('xx'), { maxBytes: 1 }).catch((e: unknown) => e)
    expect(tooLarge).toMatchObject({ status: 413, code: 'BODY_TOO_LARGE' })
    expect((tooLarge as ProblemError).problem).toMatchObject({
      type: 'payload-too-large',
      max_bytes: 1,
    })
    const malformed = await readBody(post('x', { 'content-length': 'x' })).catch((e: unknown) => e)
    expect(malformed).toMatchObject({ status: 400, code: 'CONTENT_LENGTH_INVALID' })
    expect((malformed as ProblemError).problem.type).toBe('bad-request')
  })

  test('maxBytes must be a non-negative integer', async () => {
    await expect(readBody(post('x'), { maxBytes: -1 })).rejects.toThrow(RangeError)
  })

  test('property: a body is returned whole iff it fits, else 413', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.nat(300),
        fc.integer({ min: 1, max: 64 }),
        fc.boolean(),
        async (bytes, maxBytes, chunkSize, announce) => {
          let offset = 0
          const stream = new ReadableStream<Uint8Array>({
            pull(controller) {
              if (offset >= bytes.length) return controller.close()
              controller.enqueue(bytes.slice(offset, offset + chunkSize))
              offset += chunkSize
            },
          })
          const headers: Record<string, string> = announce
            ? { 'content-length': String(bytes.length) }
            : {}
          const result = await readBody(post(stream, headers), { maxBytes }).then(
            (value) => value,
            (error: unknown) => error,
          )
          if (bytes.length <= maxBytes) expect(result).toEqual(bytes)
          else expect((result as ProblemError).status).toBe(413)
        },
      ),
      { interruptAfterTimeLimit: 1500 },
    )
  })
})

describe('readText', () => {
  test('invalid UTF-8 is 400, never replaced by U+FFFD', async () => {
    const problem = await problemOf(readText(post(new Uint8Array([0x7b, 0xff, 0x7d]))))
    expect(problem.status).toBe(400)
  })
})

describe('readJson', () => {
  const Order = z.object({ sku: z.string().min(1), quantity: z.number().int().positive() })
  const json = (body: BodyInit, type = 'application/json') => post(body, { 'content-type': type })

  test('parses and validates', async () => {
    expect(await readJson(json('{"sku":"a","quantity":2}'), Order)).toEqual({
      sku: 'a',
      quantity: 2,
    })
  })

  test('accepts +json types and a UTF-8 charset', async () => {
    for (const type of [
      'application/merge-patch+json',
      'application/json; charset=UTF-8',
      'application/json;charset=utf8',
    ]) {
      expect(await readJson(json('{"sku":"a","quantity":1}', type), Order)).toMatchObject({
        sku: 'a',
      })
    }
  })

  test.each([
    ['text/plain'],
    ['application/x-www-form-urlencoded'],
    ['application/json; charset=iso-8859-1'],
    ['application/jsonx'],
  ])('Content-Type %s is 415', async (type) => {
    const problem = await problemOf(readJson(json('{}', type), Order))
    expect(problem).toMatchObject({
      status: 415,
      accepted: ['application/json', 'application/*+json'],
    })
  })

  test('a missing Content-Type is 415', async () => {
    const problem = await problemOf(readJson(post(new Blob(['{}'])), Order))
    expect(problem.status).toBe(415)
  })

  test.each(['{"sku":', '', 'undefined', "{'sku':'a'}", '{"a":1}}'])(
    'invalid JSON %j is 400',
    async (body) => {
      const problem = await problemOf(readJson(json(body), Order))
      expect(problem.status).toBe(400)
      expect(problem.detail).toBe('The request body is not valid JSON.')
    },
  )

  test('invalid UTF-8 is 400', async () => {
    const problem = await problemOf(readJson(json(new Uint8Array([0x22, 0xc3, 0x28, 0x22])), Order))
    expect(problem.status).toBe(400)
  })

  test('a schema failure is 422 with one JSON Pointer per issue', async () => {
    const problem = await problemOf(readJson(json('{"sku":"","quantity":-1}'), Order))
    expect(problem.status).toBe(422)
    expect(
      (problem as unknown as { errors: Array<{ pointer: string }> }).errors
        .map((e) => e.pointer)
        .sort(),
    ).toEqual(['/quantity', '/sku'])
  })

  test('over the limit is 413, with or without Content-Length', async () => {
    const big = JSON.stringify({ sku: 'a'.repeat(5000), quantity: 1 })
    expect((await problemOf(readJson(json(big), Order, { maxBytes: 100 }))).status).toBe(413)
    const announced = post(big, {
      'content-type': 'application/json',
      'content-length': String(big.length),
    })
    expect((await problemOf(readJson(announced, Order, { maxBytes: 100 }))).status).toBe(413)
  })

  test('hostile nesting within the limit is a problem, never a crash', async () => {
    const Tree: z.ZodType = z.lazy(() => z.array(Tree))
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`
    const problem = await problemOf(readJson(json(deep), Tree))
    expect([400, 422]).toContain(problem.status)
  })

  test('takes any Standard Schema: one written by hand, and an asynchronous one', async () => {
    const positive: StandardSchemaV1<unknown, number> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value) =>
          typeof value === 'number' && value > 0
            ? { value }
            : { issues: [{ message: 'Expected a positive number', path: [{ key: 'n' }] }] },
      },
    }
    expect(await readJson(json('3'), positive)).toBe(3)
    const problem = await problemOf(readJson(json('-3'), positive))
    expect(problem).toMatchObject({
      status: 422,
      errors: [{ detail: 'Expected a positive number', pointer: '/n' }],
    })
    const later = z.object({ sku: z.string().refine(async (sku) => sku !== 'taken') })
    expect(await readJson(json('{"sku":"a"}'), later)).toEqual({ sku: 'a' })
    expect((await problemOf(readJson(json('{"sku":"taken"}'), later))).status).toBe(422)
  })

  test('property: any bytes give a value or a 400/413/422 problem', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc.json().map((j) => new TextEncoder().encode(j)),
        ),
        async (bytes) => {
          const outcome = await readJson(json(bytes), Order, { maxBytes: 150 }).then(
            () => 200,
            (error: unknown) => (error instanceof ProblemError ? error.status : 500),
          )
          expect([200, 400, 413, 422]).toContain(outcome)
        },
      ),
      { interruptAfterTimeLimit: 1500 },
    )
  })
})

describe('request content codings (RFC 9110 §8.4, §15.5.16, §12.5.3)', () => {
  const gzip = async (text: string): Promise<Uint8Array<ArrayBuffer>> =>
    new Uint8Array(
      await new Response(
        new Blob([text]).stream().pipeThrough(new CompressionStream('gzip')),
      ).arrayBuffer(),
    )
  const json = { 'content-type': 'application/json' }

  test('a body with a Content-Encoding the reader does not accept MUST be 415 with Accept-Encoding, before it is read', async () => {
    const { stream, state } = countingStream(4, 16)
    const request = post(stream, { ...json, 'content-encoding': 'gzip' })
    const error = await readJson(request, z.unknown()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ContentEncodingError)
    const response = errorToProblemResponse(error)
    expect(response.status).toBe(415)
    expect(await response.json()).toMatchObject({ status: 415, accepted: ['identity'] })
    expect((error as ContentEncodingError).code).toBe('CONTENT_ENCODING_UNSUPPORTED')
    expect((error as ContentEncodingError).headers).toEqual({ 'accept-encoding': 'identity' })
    expect(state.pulled).toBeLessThanOrEqual(1)
    expect(state.cancelled).toBe(true)
    // readBody and readText refuse it the same way; so does an unknown coding.
    for (const read of [readBody, readText]) {
      await expect(read(post('x', { 'content-encoding': 'br' }))).rejects.toBeInstanceOf(
        ContentEncodingError,
      )
    }
    await expect(
      readBody(post('x', { 'content-encoding': 'identity, gzip' })),
    ).rejects.toBeInstanceOf(ContentEncodingError)
  })

  test('identity (and an empty field) is no coding: accepted', async () => {
    expect(
      await readJson(post('{"a":1}', { ...json, 'content-encoding': 'identity' }), z.unknown()),
    ).toEqual({ a: 1 })
    expect(
      await readJson(post('{"a":1}', { ...json, 'content-encoding': 'IDENTITY, ' }), z.unknown()),
    ).toEqual({ a: 1 })
    expect(await readText(post('x', { 'content-encoding': '' }))).toBe('x')
  })

  test('an accepted coding is decoded; the limit bounds the decoded bytes', async () => {
    const body = JSON.stringify({ text: 'a'.repeat(5000) })
    const packed = await gzip(body)
    expect(packed.byteLength).toBeLessThan(200)
    const options = { contentCodings: ['identity', 'gzip'] as const }
    expect(
      await readJson(post(packed, { ...json, 'content-encoding': 'gzip' }), z.unknown(), options),
    ).toEqual(JSON.parse(body))
    expect(await readText(post(packed, { 'content-encoding': 'x-gzip' }), options)).toBe(body)
    // A bomb: small on the wire, over the limit once decoded.
    const problem = await problemOf(
      readBody(post(packed, { 'content-encoding': 'gzip' }), { ...options, maxBytes: 1000 }),
    )
    expect(problem).toMatchObject({ status: 413, max_bytes: 1000 })
    // Data that is not gzip: 400, not a crash.
    expect(
      await problemOf(readBody(post('not gzip', { 'content-encoding': 'gzip' }), options)),
    ).toMatchObject({ status: 400 })
    // The refusal lists what would have been accepted.
    const refused = (await readBody(post('x', { 'content-encoding': 'deflate' }), options).catch(
      (e: unknown) => e,
    )) as ContentEncodingError
    expect(refused.headers).toEqual({ 'accept-encoding': 'identity, gzip' })
  })

  test('a parsed value handed on for the bytes as sent is not taken for a decoded body', async () => {
    const body = '{"a":2}'
    const packed = await gzip(body)
    const request = post(packed, { ...json, 'content-encoding': 'gzip' })
    handOnParsedJson(request, packed, { a: 'stale' })
    expect(await readJson(request, z.unknown(), { contentCodings: ['gzip'] })).toEqual({ a: 2 })
  })

  test('without maxBytes the limit recorded for the request applies (core setBodyLimit)', async () => {
    const request = post('0123456789')
    setBodyLimit(request, 4)
    expect(await problemOf(readBody(request))).toMatchObject({ status: 413, max_bytes: 4 })
  })

  test('MUST: one limit per route: maxBytes only narrows the recorded limit, never widens it', async () => {
    // Changed on purpose: an explicit maxBytes used to replace the recorded limit, so a route
    // could read past the limit the idempotency middleware had applied to the same body.
    const wider = post('0123456789')
    setBodyLimit(wider, 4)
    expect(await problemOf(readBody(wider, { maxBytes: 10 }))).toMatchObject({
      status: 413,
      max_bytes: 4,
    })
    const narrower = post('0123456789')
    setBodyLimit(narrower, 8)
    expect(await problemOf(readBody(narrower, { maxBytes: 2 }))).toMatchObject({
      status: 413,
      max_bytes: 2,
    })
    expect((await readBody(post('0123456789'), { maxBytes: 10 })).byteLength).toBe(10)
  })
})
