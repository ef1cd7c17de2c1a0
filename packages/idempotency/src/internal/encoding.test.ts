import fc from 'fast-check'
import { expect, test } from 'vitest'
import { sha256, sha256Base64url, toBase64url, toHex, webSha256 } from './encoding.ts'

// FIPS 180-4 examples (NIST CSRC "Example Algorithms", SHA-256): "abc" and the empty string.
test.each([
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
])('SHA-256(%j) is the published digest', async (input, digest) => {
  expect(toHex(await sha256(new TextEncoder().encode(input)))).toBe(digest)
  expect(toHex(await webSha256(new TextEncoder().encode(input)))).toBe(digest)
})

test('the node:crypto fast path and Web Crypto agree on any input', async () => {
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), async (bytes) => {
      expect(await sha256(bytes)).toEqual(await webSha256(bytes))
      expect(await sha256Base64url(bytes)).toBe(toBase64url(await webSha256(bytes)))
    }),
    { interruptAfterTimeLimit: 2000 },
  )
})
