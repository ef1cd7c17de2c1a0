import fc from 'fast-check'
import { expect, test } from 'vitest'
import {
  frame,
  fromBase64,
  sha256Frame,
  sha256FrameBase64url,
  toBase64,
  toBase64url,
  toHex,
  utf8Length,
  utf8LengthPortable,
  webSha256,
} from './encoding.ts'

// FIPS 180-4 examples (NIST CSRC "Example Algorithms", SHA-256): "abc" and the empty string.
test.each([
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
])('SHA-256(%j) is the published digest', async (input, digest) => {
  expect(toHex(await webSha256(new TextEncoder().encode(input)))).toBe(digest)
})

test('utf8Length is the length TextEncoder writes, lone surrogates included', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => {
      const encoded = new TextEncoder().encode(text).length
      expect(utf8Length(text)).toBe(encoded)
      expect(utf8LengthPortable(text)).toBe(encoded)
    }),
    { interruptAfterTimeLimit: 2000 },
  )
  expect(utf8Length('\ud800x\udc00\ud83d\ude00')).toBe(3 + 1 + 3 + 4)
  expect(utf8LengthPortable('\ud800x\udc00\ud83d\ude00')).toBe(3 + 1 + 3 + 4)
})

test('hashing the frame of text and bytes equals hashing its bytes (node:crypto path against Web Crypto)', async () => {
  const part = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 32 }),
    fc.uint8Array({ maxLength: 32 }),
  )
  await fc.assert(
    fc.asyncProperty(fc.array(part, { maxLength: 6 }), async (parts) => {
      const bytes = frame(parts)
      expect(await sha256Frame(parts)).toEqual(await webSha256(bytes))
      expect(await sha256FrameBase64url(parts)).toBe(toBase64url(await webSha256(bytes)))
    }),
    { interruptAfterTimeLimit: 2000 },
  )
  // The framing itself: each part is `<UTF-8 byte length>:<bytes>`.
  expect(new TextDecoder().decode(frame(['é', new Uint8Array([0x41]), '']))).toBe('2:é1:A0:')
})

test('base64 (the Buffer path on Node) is what btoa writes, and decodes back', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(16), (bytes, offset) => {
      // A view into a larger buffer: only its own bytes are encoded.
      const view = new Uint8Array(offset + bytes.length)
      view.set(bytes, offset)
      const part = view.subarray(offset)
      const text = toBase64(part)
      expect(text).toBe(btoa(String.fromCharCode(...bytes)))
      expect(fromBase64(text)).toEqual(bytes)
    }),
    { interruptAfterTimeLimit: 2000 },
  )
  expect(() => fromBase64('A===')).toThrow(TypeError)
  expect(() => fromBase64('QQ')).toThrow(TypeError)
})
