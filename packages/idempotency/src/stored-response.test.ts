import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { StoredResponse } from './store.ts'
import { decodeStoredResponse, encodeStoredResponse } from './stored-response.ts'

const plain = (response: StoredResponse) => ({
  status: response.status,
  headers: response.headers.map(([name, value]) => [name, value]),
  body: [...response.body],
})

describe('encodeStoredResponse / decodeStoredResponse', () => {
  test('the documented form', () => {
    const response = {
      status: 201,
      headers: [['content-type', 'text/plain']] as const,
      body: new Uint8Array([104, 105]),
    }
    expect(encodeStoredResponse(response)).toBe(
      '{"v":1,"status":201,"headers":[["content-type","text/plain"]],"body":"aGk="}',
    )
  })

  test('round trip, byte for byte, for any response', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 599 }),
        fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 8 }),
        fc.uint8Array({ maxLength: 2000 }),
        (status, headers, body) => {
          const response: StoredResponse = { status, headers, body }
          expect(plain(decodeStoredResponse(encodeStoredResponse(response)))).toEqual(
            plain(response),
          )
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })

  test('a large binary body survives (the base64 is built in slices)', () => {
    const body = new Uint8Array(300_000).map((_, index) => index % 251)
    const decoded = decodeStoredResponse(encodeStoredResponse({ status: 200, headers: [], body }))
    expect(decoded.body).toEqual(body)
  })

  test.each([
    ['not JSON', '{'],
    ['another version', '{"v":2,"status":200,"headers":[],"body":""}'],
    ['a bad status', '{"v":1,"status":99,"headers":[],"body":""}'],
    ['a fractional status', '{"v":1,"status":200.5,"headers":[],"body":""}'],
    ['headers not pairs', '{"v":1,"status":200,"headers":[["a"]],"body":""}'],
    ['a header value not a string', '{"v":1,"status":200,"headers":[["a",1]],"body":""}'],
    ['no body', '{"v":1,"status":200,"headers":[]}'],
    ['a body that is not base64', '{"v":1,"status":200,"headers":[],"body":"a*b="}'],
    ['null', 'null'],
  ])('a corrupt record (%s) is a TypeError', (_, text) => {
    expect(() => decodeStoredResponse(text)).toThrow(TypeError)
  })
})
