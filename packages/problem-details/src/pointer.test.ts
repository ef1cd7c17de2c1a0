import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { toJsonPointer } from './pointer.ts'

// RFC 6901 §5: the example document's pointers, as path segments.
const rfc6901 = [
  [[], ''],
  [['foo'], '/foo'],
  [['foo', 0], '/foo/0'],
  [[''], '/'],
  [['a/b'], '/a~1b'],
  [['c%d'], '/c%d'],
  [['e^f'], '/e^f'],
  [['g|h'], '/g|h'],
  [['i\\j'], '/i\\j'],
  [['k"l'], '/k"l'],
  [[' '], '/ '],
  [['m~n'], '/m~0n'],
] as const

describe('toJsonPointer (RFC 6901)', () => {
  test.each(rfc6901)('%j → %s', (path, pointer) => {
    expect(toJsonPointer(path)).toBe(pointer)
  })

  test('decoding the pointer gives the path back', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), (path) => {
        const pointer = toJsonPointer(path)
        const decoded = pointer === '' ? [] : pointer.slice(1).split('/')
        expect(decoded.map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'))).toEqual(path)
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})
