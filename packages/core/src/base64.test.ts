import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import * as node from './base64.node.ts'
import * as portable from './base64.ts'

// RFC 4648 §10 test vectors, in the URL-safe alphabet without padding.
const RFC4648_VECTORS: [string, string][] = [
  ['', ''],
  ['f', 'Zg'],
  ['fo', 'Zm8'],
  ['foo', 'Zm9v'],
  ['foob', 'Zm9vYg'],
  ['fooba', 'Zm9vYmE'],
  ['foobar', 'Zm9vYmFy'],
]

const bytes = (text: string) => new TextEncoder().encode(text)

describe.each([
  ['portable', portable],
  ['node', node],
] as const)(
  '%s build',
  (_name, { decodeBase64, decodeBase64url, encodeBase64, encodeBase64url }) => {
    describe('base64url (RFC 4648 §5)', () => {
      for (const [plain, encoded] of RFC4648_VECTORS) {
        test(`RFC 4648 §10 vector ${JSON.stringify(plain)}`, () => {
          expect(encodeBase64url(bytes(plain))).toBe(encoded)
          expect(decodeBase64url(encoded)).toEqual(bytes(plain))
        })
      }

      test('uses - and _ where standard base64 uses + and /', () => {
        expect(encodeBase64url(new Uint8Array([0xfb, 0xff]))).toBe('-_8')
        expect(decodeBase64url('+/8')).toBeUndefined()
      })

      test('rejects padding, whitespace and characters outside the alphabet', () => {
        for (const text of ['Zg==', 'Zm8=', 'Zm 9v', 'Zm9v\n', 'Zm%39v', 'Zm9vYmFyé']) {
          expect(decodeBase64url(text)).toBeUndefined()
        }
      })

      test('rejects a length no byte string encodes to', () => {
        expect(decodeBase64url('Z')).toBeUndefined()
        expect(decodeBase64url('Zm9vY')).toBeUndefined()
      })

      test('RFC 4648 §3.5: rejects non-zero pad bits (a second spelling of the same bytes)', () => {
        // 'Zg' is "f"; 'Zh' decodes to the same byte with a pad bit set.
        expect(decodeBase64url('Zh')).toBeUndefined()
        expect(decodeBase64url('Zm9')).toBeUndefined()
        expect(decodeBase64url('Zm8')).toEqual(bytes('fo'))
      })

      test('round trip for any bytes, and the encoding is the only accepted spelling', () => {
        fc.assert(
          fc.property(fc.uint8Array({ maxLength: 64 }), (data) => {
            const text = encodeBase64url(data)
            expect(text).toMatch(/^[A-Za-z0-9_-]*$/)
            expect(decodeBase64url(text)).toEqual(data)
          }),
          { interruptAfterTimeLimit: 2000 },
        )
      })

      test('decoding never throws, and whatever decodes re-encodes to the same text', () => {
        fc.assert(
          fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => {
            const data = decodeBase64url(text)
            if (data !== undefined) expect(encodeBase64url(data)).toBe(text)
          }),
          { interruptAfterTimeLimit: 2000 },
        )
      })
    })

    // RFC 4648 §10 test vectors, standard alphabet with padding.
    const RFC4648_PADDED: [string, string][] = [
      ['', ''],
      ['f', 'Zg=='],
      ['fo', 'Zm8='],
      ['foo', 'Zm9v'],
      ['foob', 'Zm9vYg=='],
      ['fooba', 'Zm9vYmE='],
      ['foobar', 'Zm9vYmFy'],
    ]

    describe('base64 (RFC 4648 §4)', () => {
      for (const [plain, encoded] of RFC4648_PADDED) {
        test(`RFC 4648 §10 vector ${JSON.stringify(plain)}`, () => {
          expect(encodeBase64(bytes(plain))).toBe(encoded)
          expect(decodeBase64(encoded)).toEqual(bytes(plain))
        })
      }

      test('uses + and / where base64url uses - and _', () => {
        expect(encodeBase64(new Uint8Array([0xfb, 0xff]))).toBe('+/8=')
        expect(decodeBase64('-_8=')).toBeUndefined()
      })

      test('rejects missing, extra or misplaced padding and whitespace', () => {
        for (const text of [
          'Zg',
          'Zg=',
          'Zg===',
          'Z===',
          'Zm8',
          'Zm9v====',
          '=Zm8',
          'Zm 9v',
          'Zm9v\n',
        ]) {
          expect(decodeBase64(text), text).toBeUndefined()
        }
      })

      test('RFC 4648 §3.5: rejects non-zero pad bits', () => {
        expect(decodeBase64('Zh==')).toBeUndefined()
      })

      test('round trip for any bytes, agreeing with btoa', () => {
        fc.assert(
          fc.property(fc.uint8Array({ maxLength: 64 }), (data) => {
            const text = encodeBase64(data)
            expect(text).toBe(btoa(String.fromCharCode(...data)))
            expect(decodeBase64(text)).toEqual(data)
          }),
          { interruptAfterTimeLimit: 2000 },
        )
      })

      test('decoding never throws, and whatever decodes re-encodes to the same text', () => {
        fc.assert(
          fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => {
            const data = decodeBase64(text)
            if (data !== undefined) expect(encodeBase64(data)).toBe(text)
          }),
          { interruptAfterTimeLimit: 2000 },
        )
      })
    })

    test('loose (RFC 9651 §4.2.7): padding optional, pad bits ignored, the alphabet still checked', () => {
      expect(decodeBase64('Zg', { loose: true })).toEqual(bytes('f'))
      expect(decodeBase64('Zg=', { loose: true })).toEqual(bytes('f'))
      expect(decodeBase64('Zh==', { loose: true })).toEqual(bytes('f'))
      expect(decodeBase64('aGVsbG8', { loose: true })).toEqual(bytes('hello'))
      for (const text of ['Z', 'Zg===', 'Zg==Zg', '-_8=', 'Zm 9v', 'Zm9v\n']) {
        expect(decodeBase64(text, { loose: true }), text).toBeUndefined()
      }
    })
  },
)

describe('the two builds agree', () => {
  test('on every decode of any text, strict and loose, and on every encoding', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 24 }), fc.base64String({ maxLength: 24 })),
        fc.uint8Array({ maxLength: 40 }),
        (text, data) => {
          expect(node.decodeBase64(text)).toEqual(portable.decodeBase64(text))
          expect(node.decodeBase64(text, { loose: true })).toEqual(
            portable.decodeBase64(text, { loose: true }),
          )
          expect(node.decodeBase64url(text)).toEqual(portable.decodeBase64url(text))
          expect(node.encodeBase64(data)).toBe(portable.encodeBase64(data))
          expect(node.encodeBase64url(data)).toBe(portable.encodeBase64url(data))
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })

  test('decoded arrays are their own, never views into a shared pool', () => {
    const decoded = node.decodeBase64('Zm9v')!
    expect(decoded.byteOffset).toBe(0)
    expect(decoded.buffer.byteLength).toBe(3)
  })
})

test('both builds encode only the bytes of a view into a larger buffer', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(16), (data, offset) => {
      const backing = new Uint8Array(offset + data.length + 3).fill(0xff)
      backing.set(data, offset)
      const part = backing.subarray(offset, offset + data.length)
      for (const build of [portable, node]) {
        expect(build.encodeBase64(part)).toBe(btoa(String.fromCharCode(...data)))
        expect(build.encodeBase64url(part)).toBe(portable.encodeBase64url(data))
      }
    }),
    { interruptAfterTimeLimit: 1000 },
  )
})
