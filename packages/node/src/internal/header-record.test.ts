import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { plainHeaders } from './header-record.ts'

describe('plainHeaders', () => {
  test('lower-cases names and notes Content-Type and Content-Length', () => {
    expect(
      plainHeaders({ 'Content-Type': 'application/json', 'X-Id': '7', 'content-length': '2' }),
    ).toEqual({
      flat: ['content-type', 'application/json', 'x-id', '7', 'content-length', '2'],
      hasContentType: true,
      hasContentLength: true,
    })
  })

  test.each([
    ['a Headers instance', new Headers({ a: '1' })],
    ['an array of pairs', [['a', '1']]],
    ['a Map', new Map([['a', '1']])],
    ['a non-string value', { a: 1 }],
    ['a name that is not a token', { 'bad name': '1' }],
    ['a value with CR LF', { a: 'x\r\nInjected: 1' }],
    ['a value Headers would trim', { a: ' padded ' }],
    ['a control character', { a: 'x\u0001y' }],
    ['a character above U+00FF', { a: 'snow ☃' }],
    ['names differing only by case', { 'X-A': '1', 'x-a': '2' }],
  ])('declines %s (a real Headers is built instead)', (_, record) => {
    expect(plainHeaders(record)).toBeUndefined()
  })

  test('property: what it accepts, Headers accepts and iterates to the same pairs', () => {
    const name = fc.stringMatching(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,8}$/)
    const value = fc.string({
      unit: fc.constantFrom(' ', '\t', 'a', 'Z', '0', ',', 'é', '\u0001', '\n'),
      maxLength: 8,
    })
    fc.assert(
      fc.property(fc.dictionary(name, value, { maxKeys: 6 }), (record) => {
        const plain = plainHeaders(record)
        if (plain === undefined) return
        const pairs: string[][] = []
        for (let i = 0; i < plain.flat.length; i += 2)
          pairs.push([plain.flat[i]!, plain.flat[i + 1]!])
        const sorted = pairs.sort(([a = ''], [b = '']) => (a < b ? -1 : a > b ? 1 : 0))
        expect([...new Headers(record)]).toEqual(sorted)
      }),
      { numRuns: 2000, interruptAfterTimeLimit: 4000 },
    )
  })
})
