import { encodeBase64url } from '@api-blocks/core'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { parseEntityTag } from './entity-tag.ts'
import {
  etagFromBody,
  etagFromVersion,
  hashToEtag,
  validatorHeaders,
  withValidators,
} from './validators.ts'

const budget = { interruptAfterTimeLimit: 2000 }
// Well-formed text (no lone surrogates): ASCII-heavy, with some of the rest of Unicode.
const version = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('a b', 'a%20b', '%', '%25', '"', 'é'),
)

describe('etagFromVersion', () => {
  test.each([
    [7, '"7"'],
    [7n, '"7"'],
    ['v7', '"v7"'],
    ['', '""'],
    ['2026-01-01T12:00:00Z', '"2026-01-01T12:00:00Z"'],
  ])('%s → %s (strong)', (version, tag) => {
    expect(etagFromVersion(version)).toBe(tag)
  })

  test('weak on request', () => {
    expect(etagFromVersion(7, { weak: true })).toBe('W/"7"')
  })

  test('percent-encodes what an entity tag cannot hold, and "%" itself', () => {
    expect(etagFromVersion('a b')).toBe('"a%20b"')
    expect(etagFromVersion('a"b')).toBe('"a%22b"')
    expect(etagFromVersion('a%20b')).toBe('"a%2520b"')
    expect(etagFromVersion('é')).toBe('"%C3%A9"')
  })

  test('refuses a number that is not finite', () => {
    expect(() => etagFromVersion(Number.NaN)).toThrow(TypeError)
  })

  test('always gives a valid strong tag, and distinct versions give distinct tags', () => {
    fc.assert(
      fc.property(version, version, (a, b) => {
        const tag = etagFromVersion(a)
        expect(parseEntityTag(tag)).toMatchObject({ weak: false })
        if (a !== b) expect(etagFromVersion(b)).not.toBe(tag)
      }),
      budget,
    )
  })
})

describe('etagFromBody (SHA-256, base64url)', () => {
  test('the tag is the SHA-256 of the bytes (FIPS 180-2 "abc" vector)', async () => {
    expect(await etagFromBody('abc')).toBe('"ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"')
    expect(await etagFromBody(null)).toBe('"47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"')
    expect(await etagFromBody('abc', { weak: true })).toBe(
      'W/"ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"',
    )
  })

  test('any body type with the same bytes gives the same tag', async () => {
    const bytes = new TextEncoder().encode('{"id":1}')
    const expected = await etagFromBody('{"id":1}')
    expect(await etagFromBody(bytes)).toBe(expected)
    expect(await etagFromBody(new Blob([bytes]))).toBe(expected)
  })

  test('a stream gives the same tag however it is chunked', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (bytes, cuts) => {
          const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort(
            (a, b) => a - b,
          )
          const chunks: Uint8Array[] = []
          let from = 0
          for (const point of [...points, bytes.length]) {
            chunks.push(bytes.slice(from, point))
            from = point
          }
          const stream = new ReadableStream<Uint8Array>({
            start(controller) {
              for (const chunk of chunks) controller.enqueue(chunk)
              controller.close()
            },
          })
          expect(await etagFromBody(stream)).toBe(await etagFromBody(bytes))
        },
      ),
      { ...budget, numRuns: 50 },
    )
  })

  test('different bodies give different tags', async () => {
    expect(await etagFromBody('a')).not.toBe(await etagFromBody('b'))
  })
})

describe('validatorHeaders', () => {
  test('ETag and an IMF-fixdate Last-Modified, seconds only', () => {
    expect(
      validatorHeaders({ etag: '"3"', lastModified: Date.UTC(1994, 10, 6, 8, 49, 37) + 999 }),
    ).toEqual({ etag: '"3"', 'last-modified': 'Sun, 06 Nov 1994 08:49:37 GMT' })
  })

  test('a parsed tag is formatted; absent validators give no field', () => {
    expect(validatorHeaders({ etag: { weak: true, opaque: 'x' } })).toEqual({ etag: 'W/"x"' })
    expect(validatorHeaders({})).toEqual({})
  })
})

describe('withValidators', () => {
  const validators = { etag: '"3"', lastModified: Date.UTC(2026, 0, 1) }

  test.each([200, 201, 204, 206])('tags a %i response', (status) => {
    const response = withValidators(new Response(null, { status }), validators)
    expect(response.headers.get('etag')).toBe('"3"')
    expect(response.headers.get('last-modified')).toBe('Thu, 01 Jan 2026 00:00:00 GMT')
  })

  test.each([304, 400, 404, 412, 500])(
    'never tags a %i response (a 304 must not hide a status change)',
    (status) => {
      const response = withValidators(new Response(null, { status }), validators)
      expect(response.headers.has('etag')).toBe(false)
      expect(response.headers.has('last-modified')).toBe(false)
    },
  )

  test('keeps a tag the handler set', () => {
    const response = withValidators(new Response('x', { headers: { etag: '"own"' } }), validators)
    expect(response.headers.get('etag')).toBe('"own"')
  })

  test('copies a response whose headers are immutable', async () => {
    const original = new Response('body', { status: 200, headers: { 'x-a': '1' } })
    const locked = new Headers(original.headers)
    locked.set = () => {
      throw new TypeError('immutable')
    }
    Object.defineProperty(original, 'headers', { value: locked })
    const response = withValidators(original, validators)
    expect(response).not.toBe(original)
    expect(response.headers.get('etag')).toBe('"3"')
    expect(response.headers.get('x-a')).toBe('1')
    expect(await response.text()).toBe('body')
  })
})

// Under Node, @api-blocks/core/crypto is the node:crypto build; the reference here is Web
// Crypto, computed in the test, so a tag never depends on the runtime that made it.
async function webCryptoTag(bytes: Uint8Array, weak = false): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)
  const opaque = encodeBase64url(new Uint8Array(digest))
  return weak ? `W/"${opaque}"` : `"${opaque}"`
}

describe('etagFromBody gives the tag of a Web Crypto SHA-256 digest, on every runtime', () => {
  test('on any bytes, strong or weak', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), fc.boolean(), async (bytes, weak) => {
        expect(await etagFromBody(bytes, { weak })).toBe(await webCryptoTag(bytes, weak))
        expect(await hashToEtag(bytes, { weak })).toBe(await webCryptoTag(bytes, weak))
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })

  test('on any text, hashed as its UTF-8 (lone surrogates as U+FFFD, as TextEncoder writes them)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 256 }), async (text) => {
        const bytes = new TextEncoder().encode(text)
        expect(await etagFromBody(text)).toBe(await webCryptoTag(bytes))
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })

  test('on a view into a larger buffer: only the viewed bytes count', async () => {
    const buffer = new Uint8Array([0, 1, 2, 3, 4, 5]).buffer
    const view = new DataView(buffer, 2, 3)
    expect(await etagFromBody(view)).toBe(await webCryptoTag(new Uint8Array([2, 3, 4])))
    expect(await etagFromBody(buffer)).toBe(await webCryptoTag(new Uint8Array(buffer)))
  })
})
