import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import {
  formatCacheControl,
  mergeCacheControl,
  mergeExposeHeaders,
  mergeHeader,
  mergeResponseHeaders,
  mergeVary,
  parseCacheControl,
} from './index.ts'

const fieldName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/)

describe('mergeVary (RFC 9110 §12.5.5)', () => {
  test('adds names, case-insensitively deduplicated, keeping the first spelling', () => {
    expect(mergeVary('Accept-Encoding', ['origin', 'ACCEPT-ENCODING', 'Accept'])).toBe(
      'Accept-Encoding, origin, Accept',
    )
  })

  test('"*" absorbs every other member, whichever side brings it', () => {
    expect(mergeVary('Origin, Accept', '*')).toBe('*')
    expect(mergeVary('*', ['Origin'])).toBe('*')
  })

  test('invalid members are dropped', () => {
    expect(mergeVary('Accept, bad name, "quoted"', 'Origin')).toBe('Accept, Origin')
  })

  test('property: never throws, and keeps every valid name of both sides', () => {
    fc.assert(
      fc.property(
        fc.array(fieldName, { maxLength: 8 }),
        fc.array(fieldName, { maxLength: 8 }),
        (a, b) => {
          const merged = mergeVary(a.join(', '), b)
          const out = merged === '' ? [] : merged.split(', ').map((n) => n.toLowerCase())
          for (const name of [...a, ...b]) expect(out).toContain(name.toLowerCase())
          expect(new Set(out).size).toBe(out.length)
        },
      ),
      { interruptAfterTimeLimit: 1000 },
    )
  })

  test('property: arbitrary strings never make it throw, and "*" stays alone', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 200 }), (a, b) => {
        const merged = mergeVary(a, b)
        if (merged.split(', ').includes('*')) expect(merged).toBe('*')
      }),
      { interruptAfterTimeLimit: 1000 },
    )
  })
})

describe('mergeExposeHeaders', () => {
  test('deduplicates case-insensitively and keeps "*" as an ordinary member', () => {
    expect(mergeExposeHeaders('ETag, *', ['etag', 'X-Request-Id'])).toBe('ETag, *, X-Request-Id')
  })
})

describe('Cache-Control (RFC 9111 §5.2)', () => {
  test('parses directives, lowercasing names and unquoting values', () => {
    expect(parseCacheControl('Max-Age=60, private="Set-Cookie, X-A", no-store')).toEqual([
      { name: 'max-age', value: '60' },
      { name: 'private', value: 'Set-Cookie, X-A' },
      { name: 'no-store' },
    ])
  })

  test('malformed members are dropped', () => {
    expect(parseCacheControl('max-age=, =5, no cache, public')).toEqual([{ name: 'public' }])
  })

  test('the same delta-seconds directive keeps the smaller value', () => {
    expect(mergeCacheControl('max-age=600, s-maxage=60', 'max-age=60, s-maxage=600')).toBe(
      'max-age=60, s-maxage=60',
    )
  })

  test('an invalid number yields to a valid one', () => {
    expect(mergeCacheControl('max-age=soon', 'max-age=30')).toBe('max-age=30')
  })

  test('private removes public, whichever came first', () => {
    expect(mergeCacheControl('public, max-age=600', 'private, max-age=60')).toBe(
      'max-age=60, private',
    )
    expect(mergeCacheControl('private', 'public')).toBe('private')
  })

  test('bare no-cache wins over a field list; two lists are united', () => {
    expect(mergeCacheControl('no-cache="Set-Cookie"', 'no-cache')).toBe('no-cache')
    expect(mergeCacheControl('private="A"', 'private="b, a"')).toBe('private="A, b"')
  })

  test('SHOULD NOT generate the token form of a field-name list (RFC 9111 §5.2.2.4)', () => {
    expect(formatCacheControl([{ name: 'no-cache', value: 'Set-Cookie' }])).toBe(
      'no-cache="Set-Cookie"',
    )
  })

  test('other directives on both sides keep the existing value', () => {
    expect(mergeCacheControl('community="a"', 'community="b"')).toBe('community=a')
  })

  const directive = fc.oneof(
    fc.constantFrom('no-store', 'no-cache', 'private', 'public', 'must-revalidate', 'no-transform'),
    fc.nat(100000).map((n) => `max-age=${n}`),
    fc.nat(100000).map((n) => `s-maxage=${n}`),
    fc.constantFrom('private="Set-Cookie"', 'no-cache="X-A, X-B"'),
  )

  test('property: merging is idempotent and never loses a directive name', () => {
    fc.assert(
      fc.property(
        fc.array(directive, { maxLength: 6 }),
        fc.array(directive, { maxLength: 6 }),
        (a, b) => {
          const merged = mergeCacheControl(a.join(', '), b)
          expect(mergeCacheControl(merged, merged)).toBe(merged)
          const names = new Set(parseCacheControl(merged).map((d) => d.name))
          const isPrivate = names.has('private')
          for (const d of parseCacheControl([...a, ...b].join(', '))) {
            if (d.name === 'public' && isPrivate) continue
            expect(names).toContain(d.name)
          }
        },
      ),
      { interruptAfterTimeLimit: 1000 },
    )
  })

  test('property: max-age merges to the minimum in either order', () => {
    fc.assert(
      fc.property(fc.nat(1e6), fc.nat(1e6), (x, y) => {
        const expected = `max-age=${Math.min(x, y)}`
        expect(mergeCacheControl(`max-age=${x}`, `max-age=${y}`)).toBe(expected)
        expect(mergeCacheControl(`max-age=${y}`, `max-age=${x}`)).toBe(expected)
      }),
      { interruptAfterTimeLimit: 1000 },
    )
  })

  test('property: arbitrary values never make it throw', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), (a, b) => {
        mergeCacheControl(a, b)
      }),
      { interruptAfterTimeLimit: 1000 },
    )
  })
})

describe('mergeHeader (the accumulator)', () => {
  test('merges instead of overwriting', () => {
    const headers = new Headers({ vary: 'Accept', 'cache-control': 'max-age=60' })
    mergeHeader(headers, 'vary', 'Origin')
    mergeHeader(headers, 'cache-control', 'private')
    mergeHeader(headers, 'access-control-expose-headers', ['ETag'])
    expect(Object.fromEntries(headers)).toEqual({
      vary: 'Accept, Origin',
      'cache-control': 'max-age=60, private',
      'access-control-expose-headers': 'ETag',
    })
  })

  test('nothing to add sets nothing', () => {
    const headers = new Headers()
    mergeHeader(headers, 'vary', [])
    expect(headers.has('vary')).toBe(false)
  })

  test('an unknown field name is a programming error', () => {
    expect(() => mergeHeader(new Headers(), 'link' as never, 'x')).toThrow(TypeError)
  })

  test('mergeResponseHeaders copies a response whose headers are immutable', async () => {
    const redirect = Response.redirect('https://api.example/next', 302)
    const merged = mergeResponseHeaders(redirect, { vary: 'Origin', 'cache-control': 'no-store' })
    expect(merged).not.toBe(redirect)
    expect(merged.status).toBe(302)
    expect(merged.headers.get('location')).toBe('https://api.example/next')
    expect(merged.headers.get('vary')).toBe('Origin')
    const plain = new Response('x')
    expect(mergeResponseHeaders(plain, { vary: 'Origin' })).toBe(plain)
  })
})
