import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { decodeBase64, decodeBase64url, encodeBase64, encodeBase64url } from './base64.ts'

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
