// Both builds of @api-blocks/core/crypto against published vectors and against each other.
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import * as node from './node.ts'
import * as web from './web.ts'

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
const fromHex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))

// FIPS 180-4 / NIST CSRC examples for SHA-256.
const SHA256_VECTORS: [string, string][] = [
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  [
    'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  ],
]

// RFC 4231 §4.2, §4.3 and §4.7: HMAC-SHA-256 test cases 1, 2 and 6.
const HMAC_VECTORS: { key: string; data: string; mac: string }[] = [
  {
    key: '0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b',
    data: '4869205468657265',
    mac: 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
  },
  {
    key: '4a656665',
    data: '7768617420646f2079612077616e7420666f72206e6f7468696e673f',
    mac: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  },
  {
    key: 'aa'.repeat(131),
    data: '54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374',
    mac: '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
  },
]

describe.each([
  ['node:crypto', node],
  ['Web Crypto', web],
] as const)('%s build', (_name, impl) => {
  for (const [input, digest] of SHA256_VECTORS) {
    test(`FIPS 180-4 SHA-256 of ${JSON.stringify(input.slice(0, 8))}…`, async () => {
      expect(hex(await impl.sha256(input))).toBe(digest)
      expect(hex(await impl.sha256(new TextEncoder().encode(input)))).toBe(digest)
      expect(await impl.sha256Base64url(input)).toBe(
        Buffer.from(digest, 'hex').toString('base64url'),
      )
    })
  }

  HMAC_VECTORS.forEach(({ key, data, mac }, index) => {
    test(`RFC 4231 HMAC-SHA-256 vector ${index + 1}`, async () => {
      const hmacKey = impl.createHmacKey(fromHex(key))
      expect(hex(await impl.hmacSha256(hmacKey, fromHex(data)))).toBe(mac)
      expect(await impl.verifyHmacSha256(hmacKey, fromHex(data), fromHex(mac))).toBe(true)
      const forged = fromHex(mac)
      forged[31]! ^= 1
      expect(await impl.verifyHmacSha256(hmacKey, fromHex(data), forged)).toBe(false)
      expect(await impl.verifyHmacSha256(hmacKey, fromHex(data), forged.subarray(0, 16))).toBe(
        false,
      )
    })
  })

  test('a key keeps its secret even when the caller changes the array afterwards', async () => {
    const secret = new Uint8Array(32).fill(7)
    const key = impl.createHmacKey(secret)
    const before = hex(await impl.hmacSha256(key, 'x'))
    secret.fill(0)
    expect(hex(await impl.hmacSha256(key, 'x'))).toBe(before)
  })

  test('refuses an empty secret and a key of the other build', () => {
    expect(() => impl.createHmacKey(new Uint8Array(0))).toThrow(TypeError)
    const other = impl === node ? web : node
    const foreign = other.createHmacKey(new Uint8Array(32))
    return expect(impl.hmacSha256(foreign, 'x')).rejects.toThrow(TypeError)
  })

  test('timingSafeEqual: equal bytes only, different lengths unequal', () => {
    expect(impl.timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true)
    expect(impl.timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false)
    expect(impl.timingSafeEqual(new Uint8Array([1]), new Uint8Array([1, 0]))).toBe(false)
    expect(impl.timingSafeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true)
  })
})

describe('the two builds agree', () => {
  test('on SHA-256 and HMAC of any input, text (lone surrogates included) or bytes', async () => {
    const secret = crypto.getRandomValues(new Uint8Array(32))
    const keys = [node.createHmacKey(secret), web.createHmacKey(secret)] as const
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 300 })),
        async (input) => {
          expect(hex(await node.sha256(input))).toBe(hex(await web.sha256(input)))
          expect(hex(await node.hmacSha256(keys[0], input))).toBe(
            hex(await web.hmacSha256(keys[1], input)),
          )
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })

  // The node build MACs a message of up to 4 KiB in the key's own buffer and a longer one in
  // pieces: both paths, at and around the boundary, and a long key (hashed first).
  test.each([0, 1, 341, 342, 1023, 1024, 1025, 1365, 1366, 4095, 4096, 4097, 20000])(
    'on HMAC of %i bytes and of as many characters, with short and long keys',
    async (size) => {
      for (const secret of [new Uint8Array(32).fill(1), new Uint8Array(200).fill(2)]) {
        const [nodeKey, webKey] = [node.createHmacKey(secret), web.createHmacKey(secret)]
        const bytes = new Uint8Array(size).map((_, index) => index)
        for (const input of [bytes, 'é'.repeat(size), 'a'.repeat(size)]) {
          expect(hex(await node.hmacSha256(nodeKey, input))).toBe(
            hex(await web.hmacSha256(webKey, input)),
          )
        }
        // A longer message first must not leave bytes behind for a shorter one.
        expect(hex(await node.hmacSha256(nodeKey, 'x'))).toBe(
          hex(await web.hmacSha256(webKey, 'x')),
        )
      }
    },
  )

  test('on HMAC of a DataView and a Buffer handed in from JavaScript', async () => {
    const secret = new Uint8Array(32).fill(3)
    const [nodeKey, webKey] = [node.createHmacKey(secret), web.createHmacKey(secret)]
    const bytes = new Uint8Array([1, 2, 3, 4, 5])
    const expected = hex(await web.hmacSha256(webKey, bytes))
    const view = new DataView(bytes.buffer) as unknown as Uint8Array
    expect(hex(await node.hmacSha256(nodeKey, view))).toBe(expected)
    expect(hex(await node.hmacSha256(nodeKey, Buffer.from(bytes)))).toBe(expected)
  })

  test('digests are arrays of their own, not views into a shared pool', async () => {
    const digest = await node.sha256('x')
    expect(digest.byteOffset).toBe(0)
    expect(digest.buffer.byteLength).toBe(32)
  })
})

test('node:crypto digests are plain Uint8Arrays, not Buffers', async () => {
  const digest = await node.sha256('x')
  expect(Object.getPrototypeOf(digest)).toBe(Uint8Array.prototype)
  const mac = await node.hmacSha256(node.createHmacKey(new Uint8Array(32)), 'x')
  expect(Object.getPrototypeOf(mac)).toBe(Uint8Array.prototype)
})
