import type { JsonValue } from '@api-blocks/core'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { FingerprintInput } from './fingerprint.ts'
import { computeFingerprint, isJsonMediaType } from './fingerprint.ts'

const budget = { interruptAfterTimeLimit: 3000 }
const utf8 = (text: string) => new TextEncoder().encode(text)
const json = 'application/json'
const base: FingerprintInput = {
  method: 'POST',
  route: '/v1/payments',
  body: utf8('{"amount":100,"currency":"EUR","meta":{"b":1,"a":[1,2]}}'),
  contentType: json,
}
const fingerprint = (overrides: Partial<FingerprintInput> = {}) =>
  computeFingerprint({ ...base, ...overrides })

describe('computeFingerprint', () => {
  test('is SHA-256: 43 base64url characters by default, 64 hex characters on request', async () => {
    expect(await fingerprint()).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await computeFingerprint(base, { encoding: 'hex' })).toMatch(/^[0-9a-f]{64}$/)
  })

  test('is stable: a pinned vector of version 1, so stored fingerprints stay comparable', async () => {
    // SHA-256 over the framed parts "api-blocks.idempotency.fingerprint.v1", "POST", "/v1/x",
    // "0" (no headers), "json", '{"a":1}', each as "<length>:<bytes>"; computed with node:crypto.
    const input = { method: 'post', route: '/v1/x', body: utf8('{ "a" : 1 }'), contentType: json }
    expect(await computeFingerprint(input, { encoding: 'hex' })).toBe(
      'e4a32a76e6231816a48202e126dac487b69cb721e4e8e0d2326660f8b7567f66',
    )
  })

  test('bodies that differ only in member order or whitespace give the same fingerprint', async () => {
    const reordered = utf8(`{
      "meta": { "a": [1, 2], "b": 1 },
      "currency": "EUR",
      "amount": 100
    }`)
    expect(await fingerprint({ body: reordered })).toBe(await fingerprint())
  })

  test('one different byte in a value gives another fingerprint', async () => {
    const changed = utf8('{"amount":100,"currency":"EUS","meta":{"b":1,"a":[1,2]}}')
    expect(await fingerprint({ body: changed })).not.toBe(await fingerprint())
  })

  test('array order matters', async () => {
    const swapped = utf8('{"amount":100,"currency":"EUR","meta":{"b":1,"a":[2,1]}}')
    expect(await fingerprint({ body: swapped })).not.toBe(await fingerprint())
  })

  test('method, route and chosen headers are covered; method case is not', async () => {
    const original = await fingerprint()
    expect(await fingerprint({ method: 'PATCH' })).not.toBe(original)
    expect(await fingerprint({ method: 'post' })).toBe(original)
    expect(await fingerprint({ route: '/v1/refunds' })).not.toBe(original)
    const withHeader = await fingerprint({ headers: [['If-Match', '"v1"']] })
    expect(withHeader).not.toBe(original)
    expect(await fingerprint({ headers: [['if-match', '"v1"']] })).toBe(withHeader)
    expect(await fingerprint({ headers: [['if-match', '"v2"']] })).not.toBe(withHeader)
    // An absent header is not the same as an empty one.
    expect(await fingerprint({ headers: [['if-match', null]] })).not.toBe(
      await fingerprint({ headers: [['if-match', '']] }),
    )
  })

  test('header order does not matter', async () => {
    const a = await fingerprint({
      headers: [
        ['a', '1'],
        ['b', '2'],
      ],
    })
    expect(
      await fingerprint({
        headers: [
          ['b', '2'],
          ['a', '1'],
        ],
      }),
    ).toBe(a)
  })

  test('parts are framed: moving a character from route to method is another request', async () => {
    expect(await fingerprint({ method: 'POST', route: 'X/a' })).not.toBe(
      await fingerprint({ method: 'POSTX', route: '/a' }),
    )
  })

  test('a non-JSON body is compared byte for byte', async () => {
    const text = { contentType: 'text/plain' }
    const a = await fingerprint({ ...text, body: utf8('{"a":1, "b":2}') })
    expect(await fingerprint({ ...text, body: utf8('{"b":2, "a":1}') })).not.toBe(a)
    expect(await fingerprint({ ...text, body: utf8('{"a":1, "b":2}') })).toBe(a)
  })

  test('a JSON-typed body that does not parse (or is not UTF-8) falls back to its bytes', async () => {
    const broken = await fingerprint({ body: utf8('{"a":') })
    expect(broken).toBe(await fingerprint({ body: utf8('{"a":') }))
    expect(broken).not.toBe(await fingerprint({ body: utf8('{"a": ') }))
    // Not UTF-8 under a JSON type: hashed as the raw bytes, as under any other type.
    const latin1 = new Uint8Array([0x22, 0xe9, 0x22])
    expect(await fingerprint({ body: latin1 })).toBe(
      await fingerprint({ body: latin1, contentType: 'text/plain' }),
    )
  })

  test('a raw body never collides with the canonical form of a JSON one', async () => {
    const canonical = utf8('{"a":1}')
    expect(await fingerprint({ body: canonical, contentType: 'text/plain' })).not.toBe(
      await fingerprint({ body: canonical, contentType: json }),
    )
  })

  test('no body and an empty body are the same', async () => {
    expect(await fingerprint({ body: new Uint8Array(0), contentType: null })).toBe(
      await fingerprint({ body: new Uint8Array(0), contentType: undefined }),
    )
  })
})

describe('isJsonMediaType', () => {
  test.each([
    ['application/json', true],
    ['Application/JSON; charset=utf-8', true],
    ['application/merge-patch+json', true],
    ['application/problem+json;q=1', true],
    ['text/json', false],
    ['application/jsonx', false],
    ['text/plain', false],
    ['', false],
  ])('%s → %s', (type, expected) => {
    expect(isJsonMediaType(type)).toBe(expected)
  })
})

describe('computeFingerprint: properties', () => {
  const sameShape = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<JsonValue>

  test('any JSON body, re-serialised with other whitespace and member order, keeps its fingerprint', async () => {
    await fc.assert(
      fc.asyncProperty(sameShape, fc.integer({ min: 0, max: 3 }), async (value, indent) => {
        const reversed = (v: JsonValue): JsonValue =>
          Array.isArray(v)
            ? v.map(reversed)
            : v !== null && typeof v === 'object'
              ? Object.fromEntries(
                  Object.entries(v as Record<string, JsonValue>)
                    .reverse()
                    .map(([name, item]) => [name, reversed(item)]),
                )
              : v
        const a = await fingerprint({ body: utf8(JSON.stringify(value)) })
        const b = await fingerprint({ body: utf8(JSON.stringify(reversed(value), null, indent)) })
        expect(b).toBe(a)
      }),
      budget,
    )
  })

  test('changing one character of a string value changes the fingerprint', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ minLength: 1, maxLength: 20 }), {
          minKeys: 1,
        }),
        fc.nat(),
        fc.nat(),
        async (record, which, at) => {
          const names = Object.keys(record)
          const name = names[which % names.length] as string
          const value = record[name] as string
          const index = at % value.length
          const code = value.charCodeAt(index)
          const changed =
            value.slice(0, index) +
            String.fromCharCode(code === 0x61 ? 0x62 : 0x61) +
            value.slice(index + 1)
          if (changed === value) return
          const a = await fingerprint({ body: utf8(JSON.stringify(record)) })
          const b = await fingerprint({
            body: utf8(JSON.stringify({ ...record, [name]: changed })),
          })
          expect(b).not.toBe(a)
        },
      ),
      budget,
    )
  })

  test('never throws, for any bytes under any content type', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom('application/json', 'text/plain', null),
        async (body, contentType) => {
          expect(await fingerprint({ body, contentType })).toMatch(/^[A-Za-z0-9_-]{43}$/)
        },
      ),
      budget,
    )
  })
})
