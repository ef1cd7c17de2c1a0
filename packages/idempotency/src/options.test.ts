import fc from 'fast-check'
import { expect, test } from 'vitest'
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
