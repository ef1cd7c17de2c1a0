import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { defineBodySlots } from './body-slots.ts'
import { ApiBlocksError } from './error.ts'
import { BodyReadError, concatBytes, readAhead, readRequestBody, readStream } from './read-body.ts'

const bytes = (text: string) => new TextEncoder().encode(text)

function streamOf(chunks: Uint8Array[], fail?: unknown): ReadableStream<Uint8Array> {
  let cancelled = false
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift()
      if (next !== undefined) controller.enqueue(next)
      else if (fail !== undefined) controller.error(fail)
      else controller.close()
    },
    cancel() {
      cancelled = true
    },
  })
  return Object.assign(stream, { wasCancelled: () => cancelled })
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'resolved'
  } catch (error) {
    return error instanceof ApiBlocksError ? `${error.code} ${error.status}` : String(error)
  }
}

describe('readStream', () => {
  test('reads every chunk, in order, up to and including the limit', async () => {
    expect(await readStream(streamOf([bytes('ab'), bytes('cd')]), 4)).toEqual(bytes('abcd'))
    expect(await readStream(streamOf([]), 0)).toEqual(new Uint8Array(0))
  })

  test('stops at the first chunk past the limit, cancels the source: BODY_TOO_LARGE 413', async () => {
    const stream = streamOf([
      bytes('ab'),
      bytes('cde'),
      bytes('never'),
    ]) as ReadableStream<Uint8Array> & {
      wasCancelled(): boolean
    }
    const error = await readStream(stream, 4).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(BodyReadError)
    expect((error as BodyReadError).code).toBe('BODY_TOO_LARGE')
    expect((error as BodyReadError).status).toBe(413)
    expect((error as BodyReadError).maxBytes).toBe(4)
    await Promise.resolve()
    expect(stream.wasCancelled()).toBe(true)
  })

  test('a failing stream is BODY_UNREADABLE 400, with the cause', async () => {
    const cause = new Error('ECONNRESET')
    const error = (await readStream(streamOf([bytes('a')], cause), 10).catch(
      (e: unknown) => e,
    )) as BodyReadError
    expect(`${error.code} ${error.status}`).toBe('BODY_UNREADABLE 400')
    expect(error.cause).toBe(cause)
  })

  test('a stream failing with an ApiBlocksError keeps that error (and its status)', async () => {
    const own = new ApiBlocksError('REQUEST_BODY_CONSUMED', 'parsed already', { status: 500 })
    expect(await readStream(streamOf([], own), 10).catch((e: unknown) => e)).toBe(own)
  })

  test('a locked stream is BODY_ALREADY_READ 500; a chunk that is not bytes is a TypeError', async () => {
    const locked = streamOf([])
    locked.getReader()
    expect(await codeOf(readStream(locked, 10))).toBe('BODY_ALREADY_READ 500')
    const strings = new ReadableStream({
      start: (c) => {
        c.enqueue('text')
        c.close()
      },
    })
    await expect(readStream(strings as ReadableStream<Uint8Array>, 10)).rejects.toThrow(TypeError)
    const numbers = new ReadableStream({
      start(controller) {
        controller.enqueue(1)
        controller.close()
      },
    })
    await expect(readAhead(numbers as ReadableStream<Uint8Array>, 10)).rejects.toThrow(TypeError)
  })

  test('refuses a limit that is not a non-negative safe integer', async () => {
    for (const limit of [-1, 1.5, Number.NaN, 2 ** 60]) {
      await expect(readStream(streamOf([]), limit)).rejects.toThrow(RangeError)
    }
  })

  test('property: any chunking reads the same bytes, or refuses exactly when over the limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 16 }), { maxLength: 8 }),
        fc.nat({ max: 80 }),
        async (chunks, limit) => {
          const whole = concatBytes(chunks)
          const read = readStream(streamOf([...chunks]), limit)
          if (whole.byteLength <= limit) expect(await read).toEqual(whole)
          else expect(await codeOf(read)).toBe('BODY_TOO_LARGE 413')
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('readAhead', () => {
  test('a body within the limit comes back whole', async () => {
    expect(await readAhead(streamOf([bytes('ab'), bytes('c')]), 3)).toEqual({
      complete: true,
      bytes: bytes('abc'),
    })
  })

  test('past the limit, a stream that still gives every byte', async () => {
    const ahead = await readAhead(streamOf([bytes('ab'), bytes('cd'), bytes('ef')]), 3)
    expect(ahead.complete).toBe(false)
    if (ahead.complete) return
    expect(new Uint8Array(await new Response(ahead.stream).arrayBuffer())).toEqual(bytes('abcdef'))
  })

  test("a failing stream rejects with the stream's own error", async () => {
    const cause = new Error('boom')
    expect(await readAhead(streamOf([bytes('a')], cause), 10).catch((e: unknown) => e)).toBe(cause)
  })
})

describe('readRequestBody', () => {
  const post = (body: BodyInit | null, headers?: HeadersInit) =>
    new Request('https://api.example/', {
      method: 'POST',
      body,
      ...(headers ? { headers } : {}),
      duplex: 'half',
    } as RequestInit)

  test('reads a body; no body gives empty bytes', async () => {
    expect(await readRequestBody(post('hello'), { maxBytes: 5 })).toEqual(bytes('hello'))
    expect(await readRequestBody(post(null), { maxBytes: 0 })).toEqual(new Uint8Array(0))
    expect(await readRequestBody(new Request('https://api.example/'), { maxBytes: 0 })).toEqual(
      new Uint8Array(0),
    )
  })

  test('RFC 9110 §15.5.14: Content-Length over the limit is refused before reading', async () => {
    const request = post('small', { 'content-length': '999' })
    expect(await codeOf(readRequestBody(request, { maxBytes: 10 }))).toBe('BODY_TOO_LARGE 413')
  })

  test('RFC 9110 §8.6: a Content-Length that is not 1*DIGIT is CONTENT_LENGTH_INVALID 400', async () => {
    for (const value of ['-1', '1e3', 'ten', '0x10']) {
      const request = post('x', { 'content-length': value })
      expect(await codeOf(readRequestBody(request, { maxBytes: 10 })), value).toBe(
        'CONTENT_LENGTH_INVALID 400',
      )
    }
  })

  test('a body read before is BODY_ALREADY_READ 500', async () => {
    const request = post('x')
    await request.text()
    expect(await codeOf(readRequestBody(request, { maxBytes: 10 }))).toBe('BODY_ALREADY_READ 500')
  })

  test('a Request holding its body whole answers it; consume: false leaves it unread', async () => {
    class Held extends Request {
      readonly held = bytes('kept')
    }
    defineBodySlots(Held.prototype, {
      wholeBody(this: Held) {
        return this.bodyUsed ? undefined : this.held
      },
    })
    const peeked = new Held('https://api.example/', { method: 'POST', body: 'kept' })
    expect(await readRequestBody(peeked, { maxBytes: 4, consume: false })).toBe(peeked.held)
    expect(peeked.bodyUsed).toBe(false)
    expect(await readRequestBody(peeked, { maxBytes: 4 })).toEqual(bytes('kept'))
    expect(peeked.bodyUsed).toBe(true)
    const tooBig = new Held('https://api.example/', { method: 'POST', body: 'kept' })
    expect(await codeOf(readRequestBody(tooBig, { maxBytes: 3 }))).toBe('BODY_TOO_LARGE 413')
  })

  test('a Request that reads its own body whole is read so, within the limit, failures mapped', async () => {
    // The readWholeBody slot of the node adapter's lightweight request (tested against
    // node:http there).
    class Own extends Request {
      asked: number[] = []
      answer: () => Promise<Uint8Array> | undefined = () => Promise.resolve(bytes('own'))
    }
    defineBodySlots(Own.prototype, {
      readWholeBody(this: Own, maxBytes: number) {
        this.asked.push(maxBytes)
        return this.answer()
      },
    })
    const make = () => new Own('https://api.example/', { method: 'POST', body: 'stream' })
    const own = make()
    expect(await readRequestBody(own, { maxBytes: 10 })).toEqual(bytes('own'))
    expect(own.asked).toEqual([10])
    // The limit still holds over what the hook gives.
    const over = make()
    expect(await codeOf(readRequestBody(over, { maxBytes: 2 }))).toBe('BODY_TOO_LARGE 413')
    // A failure of its own stands; any other is BODY_UNREADABLE.
    const failing = make()
    failing.answer = () => Promise.reject(new BodyReadError('BODY_TOO_LARGE', 'x', 1))
    expect(await codeOf(readRequestBody(failing, { maxBytes: 10 }))).toBe('BODY_TOO_LARGE 413')
    const broken = make()
    broken.answer = () => Promise.reject(new Error('reset'))
    expect(await codeOf(readRequestBody(broken, { maxBytes: 10 }))).toBe('BODY_UNREADABLE 400')
    // Declined: the stream is read as usual.
    const declined = make()
    declined.answer = () => undefined
    expect(await readRequestBody(declined, { maxBytes: 10 })).toEqual(bytes('stream'))
  })
})
