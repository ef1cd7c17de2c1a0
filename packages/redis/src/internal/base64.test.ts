import { decodeBase64, encodeBase64 } from '@api-blocks/core'
import fc from 'fast-check'
import { expect, test } from 'vitest'
import { NODE_BASE64 } from './base64.ts'

const { encodeBase64: encode, decodeBase64: decode } = NODE_BASE64 as Required<typeof NODE_BASE64>

test('Buffer base64 writes what core writes, and reads it back, views included', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat(16), (bytes, offset) => {
      // A view into a larger buffer: only its own bytes are encoded.
      const view = new Uint8Array(offset + bytes.length + 3)
      view.set(bytes, offset)
      const part = view.subarray(offset, offset + bytes.length)
      const text = encode(part)
      expect(text).toBe(encodeBase64(bytes))
      expect(decode(text)).toEqual(bytes)
      expect(decode(text)).toEqual(decodeBase64(text))
    }),
    { interruptAfterTimeLimit: 2000 },
  )
})

test('text that is not padded base64 is refused, as core refuses it', () => {
  for (const text of ['A===', 'QQ', 'a*b=', 'QUJD\n', 'QU=D', 'Q===']) {
    expect(decode(text)).toBeUndefined()
    expect(decodeBase64(text)).toBeUndefined()
  }
})
