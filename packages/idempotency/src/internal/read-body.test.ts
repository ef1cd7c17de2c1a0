import { describe, expect, test } from 'vitest'
import { IdempotencyError } from '../error.ts'
import { readBodyBounded } from './read-body.ts'

const reasonOf = async (promise: Promise<unknown>) => {
  try {
    await promise
    return undefined
  } catch (error) {
    return error instanceof IdempotencyError ? error.reason : String(error)
  }
}

describe('readBodyBounded', () => {
  test('reads the whole body', async () => {
    const request = new Request('https://x/', { method: 'POST', body: 'hello' })
    expect(new TextDecoder().decode((await readBodyBounded(request, 5)) ?? undefined)).toBe('hello')
  })

  test('no body is null', async () => {
    expect(await readBodyBounded(new Request('https://x/', { method: 'POST' }), 5)).toBeNull()
  })

  test('a declared Content-Length over the limit is refused before reading', async () => {
    const body = new ReadableStream({ pull: () => {} })
    const request = new Request('https://x/', {
      method: 'POST',
      body,
      headers: { 'content-length': '6' },
      duplex: 'half',
    } as RequestInit)
    expect(await reasonOf(readBodyBounded(request, 5))).toBe('body_too_large')
    expect(request.bodyUsed).toBe(false)
  })

  test('a stream over the limit stops being read at the limit', async () => {
    let chunks = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        chunks++
        controller.enqueue(new Uint8Array(4))
      },
    })
    const request = new Request('https://x/', {
      method: 'POST',
      body,
      duplex: 'half',
    } as RequestInit)
    const error = await readBodyBounded(request, 10).catch((caught: unknown) => caught)
    expect((error as IdempotencyError).reason).toBe('body_too_large')
    expect((error as IdempotencyError).toProblem()).toMatchObject({ status: 413, max_bytes: 10 })
    expect(chunks).toBeLessThanOrEqual(4)
  })

  test('a client that hangs up mid-body gives body_unreadable (400)', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([123]))
        controller.error(new Error('socket hang up'))
      },
    })
    const request = new Request('https://x/', {
      method: 'POST',
      body,
      duplex: 'half',
    } as RequestInit)
    const error = await readBodyBounded(request, 100).catch((caught: unknown) => caught)
    expect((error as IdempotencyError).reason).toBe('body_unreadable')
    expect((error as IdempotencyError).status).toBe(400)
  })

  test('a body already read gives body_unreadable', async () => {
    const request = new Request('https://x/', { method: 'POST', body: 'x' })
    await request.text()
    expect(await reasonOf(readBodyBounded(request, 100))).toBe('body_unreadable')
  })
})
