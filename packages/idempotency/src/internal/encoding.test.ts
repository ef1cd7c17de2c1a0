import fc from 'fast-check'
import { expect, test } from 'vitest'
import {
  frame,
  sha256Frame,
  sha256FrameBase64url,
  toBase64url,
  toHex,
  utf8Length,
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
      expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length)
    }),
    { interruptAfterTimeLimit: 2000 },
  )
  expect(utf8Length('\ud800x\udc00\ud83d\ude00')).toBe(3 + 1 + 3 + 4)
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
