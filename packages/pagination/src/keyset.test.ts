import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { CursorPosition, KeysetOrder, PageRequest } from './keyset.ts'
import { comparePositions, positionOf, seekArray } from './keyset.ts'

interface Row {
  id: string
  score: number
}

const asc: KeysetOrder = { keys: ['score', 'id'], direction: 'asc' }
const desc: KeysetOrder = { keys: ['score', 'id'], direction: 'desc' }
const rows: Row[] = [
  { id: 'e', score: 2 },
  { id: 'a', score: 1 },
  { id: 'c', score: 2 },
  { id: 'b', score: 1 },
  { id: 'd', score: 3 },
]
const ids = (list: readonly Row[]) => list.map((row) => row.id)

describe('positionOf', () => {
  test('takes the order keys of an item, in order', () => {
    expect(positionOf({ id: 'a', score: 1, other: true }, asc)).toEqual([1, 'a'])
  })

  test('a Date becomes its ISO 8601 string, -0 becomes 0', () => {
    const order: KeysetOrder = { keys: ['at', 'n'], direction: 'asc' }
    const position = positionOf({ at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), n: -0 }, order)
    expect(position[0]).toBe('2026-01-02T03:04:05.000Z')
    expect(Object.is(position[1], 0)).toBe(true)
  })

  test('a missing, null, object or non-finite key is a TypeError (a server bug)', () => {
    for (const score of [undefined, null, {}, Number.NaN, Number.POSITIVE_INFINITY, 1n]) {
      expect(() => positionOf({ id: 'a', score }, asc)).toThrow(TypeError)
    }
  })
})

describe('comparePositions', () => {
  test.each([
    [[1, 'a'], [1, 'a'], 0],
    [[1, 'a'], [1, 'b'], -1],
    [[2, 'a'], [1, 'b'], 1],
    [[10], [9], 1], // numbers compare as numbers, not as text
    [['10'], ['9'], -1], // strings by code unit
    [[false], [true], -1],
    [['B'], ['a'], -1], // upper case sorts first, as in COLLATE "C"
  ] as [CursorPosition, CursorPosition, number][])('%j vs %j', (a, b, sign) => {
    expect(Math.sign(comparePositions(a, b))).toBe(sign)
    expect(Math.sign(comparePositions(b, a))).toBe(0 - sign)
  })
})

describe('seekArray', () => {
  const page = (request: Omit<PageRequest, 'order'>, order = asc): PageRequest => ({
    order,
    ...request,
  })

  test('sorts by the order and fetches limit + 1 rows', () => {
    expect(ids(seekArray(rows, page({ direction: 'forward', limit: 2 })))).toEqual(['a', 'b', 'c'])
    expect(ids(seekArray(rows, page({ direction: 'forward', limit: 2 }, desc)))).toEqual([
      'd',
      'e',
      'c',
    ])
  })

  test('after is exclusive and means later in the order, ascending or descending', () => {
    expect(ids(seekArray(rows, page({ direction: 'forward', limit: 9, after: [1, 'b'] })))).toEqual(
      ['c', 'e', 'd'],
    )
    expect(
      ids(seekArray(rows, page({ direction: 'forward', limit: 9, after: [2, 'e'] }, desc))),
    ).toEqual(['c', 'b', 'a'])
  })

  test('before is exclusive and means earlier in the order', () => {
    expect(
      ids(seekArray(rows, page({ direction: 'forward', limit: 9, before: [2, 'c'] }))),
    ).toEqual(['a', 'b'])
    expect(
      ids(seekArray(rows, page({ direction: 'forward', limit: 9, before: [2, 'c'] }, desc))),
    ).toEqual(['d', 'e'])
  })

  test('a backward request fetches from the end, in reverse order', () => {
    expect(
      ids(seekArray(rows, page({ direction: 'backward', limit: 1, before: [3, 'd'] }))),
    ).toEqual(['e', 'c'])
  })

  test('a position between rows works: the row it named may be gone', () => {
    expect(ids(seekArray(rows, page({ direction: 'forward', limit: 9, after: [2, 'd'] })))).toEqual(
      ['e', 'd'],
    )
  })

  test('does not modify the array', () => {
    const copy = [...rows]
    seekArray(rows, page({ direction: 'forward', limit: 1 }, desc))
    expect(rows).toEqual(copy)
  })

  test('an order that cannot work is a TypeError', () => {
    for (const order of [
      { keys: [], direction: 'asc' },
      { keys: ['id', 'id'], direction: 'asc' },
      { keys: [''], direction: 'asc' },
      { keys: ['id'], direction: 'up' },
      { keys: Array.from({ length: 9 }, (_, i) => `k${i}`), direction: 'asc' },
    ]) {
      expect(() =>
        seekArray(rows, { order: order as KeysetOrder, direction: 'forward', limit: 1 }),
      ).toThrow(TypeError)
    }
  })

  test('equals a brute-force slice of the sorted array, for random data', () => {
    // Scores collide often, so the id tiebreaker matters; ids are unique.
    const data = fc.uniqueArray(
      fc.record({ id: fc.string({ maxLength: 4 }), score: fc.integer({ min: 0, max: 5 }) }),
      { selector: (row) => row.id, maxLength: 30 },
    )
    const bound = fc.option(
      fc.tuple(fc.integer({ min: -1, max: 6 }), fc.string({ maxLength: 4 })),
      { nil: undefined },
    )
    fc.assert(
      fc.property(
        data,
        fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
        fc.constantFrom<'forward' | 'backward'>('forward', 'backward'),
        fc.nat(10),
        bound,
        bound,
        (items, direction, paging, limit, after, before) => {
          // The oracle: a plain tuple comparison, reversed for desc, then a slice.
          const byKey = (a: Row, b: Row) =>
            a.score - b.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
          const inOrder = (a: Row, b: Row) => (direction === 'asc' ? byKey(a, b) : -byKey(a, b))
          const asRow = (p: [number, string]) => ({ score: p[0], id: p[1] })
          const between = [...items]
            .sort(inOrder)
            .filter((row) => after === undefined || inOrder(row, asRow(after)) > 0)
            .filter((row) => before === undefined || inOrder(row, asRow(before)) < 0)
          const expected =
            paging === 'forward'
              ? between.slice(0, limit + 1)
              : between.reverse().slice(0, limit + 1)
          const request: PageRequest = {
            order: { keys: ['score', 'id'], direction },
            direction: paging,
            limit,
            ...(after === undefined ? {} : { after }),
            ...(before === undefined ? {} : { before }),
          }
          expect(seekArray(items, request)).toEqual(expected)
        },
      ),
      { numRuns: 1000, interruptAfterTimeLimit: 3000 },
    )
  })
})
