import { ProblemError } from '@api-blocks/problem-details'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { z } from 'zod'
import { DEFAULT_MAX_BODY_BYTES, readBody, readJson, readText } from './index.ts'

const url = 'https://api.example/v1/orders'
const post = (body: BodyInit | null, headers: Record<string, string> = {}) =>
  new Request(url, { method: 'POST', body, headers, duplex: 'half' } as RequestInit)

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

  test('readJson takes the value a middleware parsed (the parsed-JSON slot) while it describes the bytes held', async () => {
    const JSON_BODY = Symbol.for('api-blocks.json-body')
    const holding = (text: string, parsed: (bytes: Uint8Array) => unknown) => {
      const bytes = new TextEncoder().encode(text)
      const request = post(text, { 'content-type': 'application/json' })
      Object.defineProperty(request, Symbol.for('api-blocks.whole-body'), { get: () => bytes })
      ;(request as unknown as Record<symbol, unknown>)[JSON_BODY] = parsed(bytes)
      return request
    }
    const value = { a: 1 }
    const fresh = holding('{"a":1}', (bytes) => ({ bytes, value }))
    expect(await readJson(fresh, z.unknown())).toBe(value)
    // Taken once: the slot is cleared.
    expect((fresh as unknown as Record<symbol, unknown>)[JSON_BODY]).toBeUndefined()
    // Describing other bytes (the body was replaced since): the body is parsed.
    const stale = holding('{"a":2}', () => ({ bytes: new Uint8Array(7), value }))
    expect(await readJson(stale, z.unknown())).toEqual({ a: 2 })
    // The limits still hold, and the schema still runs.
    const large = holding('{"a":"xxxxxxxxxx"}', (bytes) => ({ bytes, value }))
    expect(await problemOf(readJson(large, z.unknown(), { maxBytes: 10 }))).toMatchObject({
      status: 413,
    })
    const invalid = holding('{"a":"one"}', (bytes) => ({ bytes, value: { a: 'one' } }))
    expect(await problemOf(readJson(invalid, z.object({ a: z.number() })))).toMatchObject({
      status: 422,
    })
  })

  test('a request without a body gives an empty array', async () => {
    expect(await readBody(new Request(url))).toEqual(new Uint8Array(0))
  })

  test('a body the Request holds in memory (whole-body slot) is taken with bytes(), not streamed', async () => {
    // What @api-blocks/node's Request answers once a middleware or framework read the body.
    const holding = (text: string) => {
      const bytes = new TextEncoder().encode(text)
      const request = post(text, { 'content-type': 'application/json' })
      let streamed = false
      const body = request.body
      Object.defineProperty(request, Symbol.for('api-blocks.whole-body'), { get: () => bytes })
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
    const problem = await problemOf(readBody(post(stream)))
    expect(problem).toMatchObject({ status: 400 })
  })

  test('reading twice is a programming error', async () => {
    const request = post('x')
    await readBody(request)
    await expect(readBody(request)).rejects.toThrow(TypeError)
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
