import fc from 'fast-check'
import { expect, test, vi } from 'vitest'
import { MemoryIdempotencyStore } from './memory-store.ts'
import { resolveOptions } from './options.ts'

const { route } = resolveOptions({ store: new MemoryIdempotencyStore(), scope: 'tenant' })

test('the default route is the path and query of the URL, as URL parses them', () => {
  fc.assert(
    fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
      const request = new Request(url)
      const parsed = new URL(request.url)
      expect(route(request)).toBe(parsed.pathname + parsed.search)
    }),
    { interruptAfterTimeLimit: 2000 },
  )
  expect(route(new Request('https://api.example:8443/v1/orders?a=1#top'))).toBe('/v1/orders?a=1')
  expect(route(new Request('http://[::1]/?#'))).toBe('/')
  expect(route(new Request('http://api.example/a//b?x=/y'))).toBe('/a//b?x=/y')
})

test('default owner tokens: unique, one random draw on first use, none when the middleware is made', () => {
  const draw = vi.spyOn(globalThis.crypto, 'randomUUID')
  try {
    const { generateOwner } = resolveOptions({ store: new MemoryIdempotencyStore(), scope: 's' })
    // Workers refuse random values outside a request: making the middleware draws none.
    expect(draw).not.toHaveBeenCalled()
    const tokens = Array.from({ length: 1000 }, () => generateOwner())
    expect(new Set(tokens).size).toBe(1000)
    expect(draw).toHaveBeenCalledTimes(1)
    // Another middleware (another process, as far as the store knows) has another prefix.
    const other = resolveOptions({ store: new MemoryIdempotencyStore(), scope: 's' })
    expect(tokens).not.toContain(other.generateOwner())
  } finally {
    draw.mockRestore()
  }
})
