import fc from 'fast-check'
import { expect, test } from 'vitest'
import { frame, toHex, utf8Length } from './encoding.ts'

const utf8 = (input: string | Uint8Array) =>
  typeof input === 'string' ? new TextEncoder().encode(input) : input

test('utf8Length is the length TextEncoder writes, lone surrogates included', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => {
      expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length)
    }),
    { interruptAfterTimeLimit: 2000 },
  )
  expect(utf8Length('\ud800x\udc00\ud83d\ude00')).toBe(3 + 1 + 3 + 4)
})

test('a frame is the same bytes whether its parts are given as text or as bytes', () => {
  const part = fc.string({ unit: 'binary', maxLength: 32 })
  fc.assert(
    fc.property(fc.array(fc.tuple(part, fc.boolean()), { maxLength: 6 }), (parts) => {
      const asText = frame(parts.map(([text]) => text))
      const mixed = frame(parts.map(([text, bytes]) => (bytes ? utf8(text) : text)))
      expect(typeof asText).toBe('string')
      expect(utf8(mixed)).toEqual(utf8(asText))
    }),
    { interruptAfterTimeLimit: 2000 },
  )
  // The framing itself: each part is `<UTF-8 byte length>:<bytes>`.
  expect(new TextDecoder().decode(utf8(frame(['é', new Uint8Array([0x41]), ''])))).toBe('2:é1:A0:')
  expect(frame(['ab', 'c'])).not.toBe(frame(['a', 'bc']))
})

test('toHex writes two lowercase digits per byte', () => {
  expect(toHex(new Uint8Array([0, 9, 10, 255]))).toBe('00090aff')
})
