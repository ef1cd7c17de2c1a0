import { setBodyLimit, setClientAddress } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import { MemoryIdempotencyStore } from './memory-store.ts'
import { idempotency } from './middleware.ts'

/** A keyed POST whose body is a stream of `chunks` chunks of `size` bytes, counting what is pulled. */
function streamed(chunks: number, size: number) {
  const state = { pulled: 0 }
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === chunks) return controller.close()
      sent++
      state.pulled += size
      controller.enqueue(new Uint8Array(size).fill(0x20))
    },
  })
  const request = new Request('https://api.example/v1/orders', {
    method: 'POST',
    headers: { 'idempotency-key': 'k1', 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit)
  setClientAddress(request, '198.51.100.2')
  return { request, state }
}

describe('idempotency(): the route body limit (core setBodyLimit)', () => {
  const handler = async () => new Response('ran', { status: 201 })

  test('reads at most the limit recorded for the route, and answers its 413 with that limit', async () => {
    const middleware = idempotency({ store: new MemoryIdempotencyStore() })
    const { request, state } = streamed(100, 1024)
    setBodyLimit(request, 64 * 1024)
    const response = await middleware(request, handler)
    expect(response.status).toBe(413)
    expect(await response.json()).toMatchObject({ status: 413, max_bytes: 65_536 })
    // Pulled: the limit, the chunk past it, and at most one the stream queued ahead.
    expect(state.pulled).toBeLessThanOrEqual(64 * 1024 + 2 * 1024)
  })

  test('its own maxBodyBytes still applies when smaller than the route limit', async () => {
    const middleware = idempotency({ store: new MemoryIdempotencyStore(), maxBodyBytes: 2048 })
    const { request, state } = streamed(100, 1024)
    setBodyLimit(request, 64 * 1024)
    const response = await middleware(request, handler)
    expect(await response.json()).toMatchObject({ status: 413, max_bytes: 2048 })
    expect(state.pulled).toBeLessThanOrEqual(4096)
  })

  test('a Content-Encoding passes through to the route (whose reader answers 415); the claim is released', async () => {
    const store = new MemoryIdempotencyStore()
    const middleware = idempotency({ store })
    const send = () => {
      const request = new Request('https://api.example/v1/orders', {
        method: 'POST',
        headers: {
          'idempotency-key': 'k2',
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        },
        body: new Uint8Array([0x1f, 0x8b, 8, 0]),
      })
      setClientAddress(request, '198.51.100.2')
      return request
    }
    let ran = 0
    const route = async (request: Request) => {
      ran++
      expect(request.headers.get('content-encoding')).toBe('gzip')
      return new Response(null, { status: 415, headers: { 'accept-encoding': 'identity' } })
    }
    expect((await middleware(send(), route)).status).toBe(415)
    expect((await middleware(send(), route)).status).toBe(415)
    expect(ran).toBe(2)
  })
})
