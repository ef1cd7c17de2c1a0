import type { StoredResponse } from '@api-blocks/idempotency'
import { decodeStoredResponse, encodeStoredResponse } from '@api-blocks/idempotency'
import fc from 'fast-check'
import { expect, test } from 'vitest'
import { NODE_BASE64 } from './base64.ts'

const stored = (body: Uint8Array): StoredResponse => ({ status: 200, headers: [], body })
const text = (body: string) => `{"v":1,"status":200,"headers":[],"body":"${body}"}`

test("Buffer's base64 writes the very text of the codec's default (core's), and reads it back, views included", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat(16), (bytes, offset) => {
      // A view into a larger buffer: only its own bytes are encoded.
      const view = new Uint8Array(offset + bytes.length + 3)
      view.set(bytes, offset)
      const part = view.subarray(offset, offset + bytes.length)
      const encoded = encodeStoredResponse(stored(part), NODE_BASE64)
      expect(encoded).toBe(encodeStoredResponse(stored(bytes)))
      expect([...decodeStoredResponse(encoded, NODE_BASE64).body]).toEqual([...bytes])
      expect([...decodeStoredResponse(encoded).body]).toEqual([...bytes])
    }),
    { interruptAfterTimeLimit: 2000 },
  )
})

test('a body that is not padded base64 is a corrupt record (TypeError), as with the default', () => {
  for (const body of ['A===', 'QQ', 'a*b=', 'QUJD\\n', 'QU=D', 'Q===']) {
    expect(() => decodeStoredResponse(text(body), NODE_BASE64), body).toThrow(TypeError)
    expect(() => decodeStoredResponse(text(body)), body).toThrow(TypeError)
  }
})
