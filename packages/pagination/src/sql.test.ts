import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { CursorValue, KeysetOrder, PageRequest } from './keyset.ts'
import { comparePositions, seekArray } from './keyset.ts'
import { keysetSql, quoteIdentifier } from './sql.ts'

const desc: KeysetOrder = { keys: ['created_at', 'id'], direction: 'desc' }
const asc: KeysetOrder = { keys: ['created_at', 'id'], direction: 'asc' }
const at = ['2026-06-01T10:00:00.000Z', 'ord_000042']
const before = ['2026-05-01T10:00:00.000Z', 'ord_000007']

describe('quoteIdentifier', () => {
  test('double-quotes a column or table.column', () => {
    expect(quoteIdentifier('created_at')).toBe('"created_at"')
    expect(quoteIdentifier('o.created_at')).toBe('"o"."created_at"')
  })

  test('refuses anything that could carry SQL', () => {
    for (const name of [
      '',
      'a"b',
      'id; DROP TABLE x',
      'a b',
      '1a',
      'a.b.c',
      'a.',
      '"a"',
      'x'.repeat(64),
      'é',
    ]) {
      expect(() => quoteIdentifier(name)).toThrow(TypeError)
    }
  })
})

describe('keysetSql', () => {
  test('first page: no seek predicate, the order, limit + 1', () => {
    expect(keysetSql({ order: desc, direction: 'forward', limit: 20 })).toEqual({
      where: 'TRUE',
      params: [],
      orderBy: '"created_at" DESC, "id" DESC',
      limit: 21,
    })
  })

  test('after, descending: (sort_key, id) < ($1, $2)', () => {
    const sql = keysetSql({ order: desc, direction: 'forward', limit: 20, after: at })
    expect(sql.where).toBe('("created_at", "id") < ($1, $2)')
    expect(sql.params).toEqual(at)
  })

  test('after, ascending: (sort_key, id) > ($1, $2)', () => {
    const sql = keysetSql({ order: asc, direction: 'forward', limit: 20, after: at })
    expect(sql.where).toBe('("created_at", "id") > ($1, $2)')
    expect(sql.orderBy).toBe('"created_at" ASC, "id" ASC')
  })

  test('after and before together bound both sides', () => {
    const sql = keysetSql({ order: asc, direction: 'forward', limit: 5, after: before, before: at })
    expect(sql.where).toBe('("created_at", "id") > ($1, $2) AND ("created_at", "id") < ($3, $4)')
    expect(sql.params).toEqual([...before, ...at])
  })

  test('backward (Relay last/before): the order is reversed so LIMIT keeps the nearest rows', () => {
    const sql = keysetSql({ order: desc, direction: 'backward', limit: 10, before: at })
    expect(sql.where).toBe('("created_at", "id") > ($1, $2)')
    expect(sql.orderBy).toBe('"created_at" ASC, "id" ASC')
    expect(sql.limit).toBe(11)
  })

  test('a single key compares without a row value', () => {
    const sql = keysetSql({
      order: { keys: ['id'], direction: 'asc' },
      direction: 'forward',
      limit: 1,
      after: ['x'],
    })
    expect(sql.where).toBe('"id" > $1')
  })

  test('columns map keys to (qualified) columns', () => {
    const sql = keysetSql(
      { order: desc, direction: 'forward', limit: 1, after: at },
      { columns: { created_at: 'o.created' } },
    )
    expect(sql.where).toBe('("o"."created", "id") < ($1, $2)')
    expect(sql.orderBy).toBe('"o"."created" DESC, "id" DESC')
  })

  test('? placeholders, and $n numbering that follows the query’s own parameters', () => {
    const request: PageRequest = { order: desc, direction: 'forward', limit: 1, after: at }
    expect(keysetSql(request, { placeholder: 'question' }).where).toBe(
      '("created_at", "id") < (?, ?)',
    )
    expect(keysetSql(request, { firstParam: 3 }).where).toBe('("created_at", "id") < ($3, $4)')
  })

  test('a key that is not a safe identifier, or a position of the wrong size, is a TypeError', () => {
    const bad: KeysetOrder = { keys: ['id"; --'], direction: 'asc' }
    expect(() => keysetSql({ order: bad, direction: 'forward', limit: 1 })).toThrow(TypeError)
    expect(() => keysetSql({ order: desc, direction: 'forward', limit: 1, after: ['x'] })).toThrow(
      TypeError,
    )
    expect(() =>
      keysetSql({ order: desc, direction: 'forward', limit: 1 }, { firstParam: 0 }),
    ).toThrow(TypeError)
  })

  test('values are only ever parameters, never part of the SQL text', () => {
    const value = fc.oneof(
      fc.string(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
    )
    fc.assert(
      fc.property(fc.tuple(value, value), fc.tuple(value, value), (a, b) => {
        const sql = keysetSql({ order: asc, direction: 'forward', limit: 1, after: a, before: b })
        expect(sql.where).toBe(
          '("created_at", "id") > ($1, $2) AND ("created_at", "id") < ($3, $4)',
        )
        expect(sql.params).toEqual([...a, ...b])
      }),
      { interruptAfterTimeLimit: 1000 },
    )
  })
})

// A tiny interpreter for exactly the SQL keysetSql writes (row-value comparisons joined by
// AND, an ORDER BY list, a LIMIT), with SQL's row-comparison semantics: lexicographic.
function runSql<T extends Record<string, CursorValue>>(
  rows: readonly T[],
  request: PageRequest,
): T[] {
  const sql = keysetSql(request)
  const column = (quoted: string) => quoted.slice(1, -1)
  const predicates =
    sql.where === 'TRUE'
      ? []
      : sql.where.split(' AND ').map((text) => {
          const match = /^\((.+)\) ([<>]) \((.+)\)$/.exec(text) ?? /^(\S+) ([<>]) (\S+)$/.exec(text)
          if (match === null) throw new Error(`unexpected SQL ${text}`)
          const columns = match[1]!.split(', ').map(column)
          const values = match[3]!.split(', ').map((mark) => sql.params[Number(mark.slice(1)) - 1]!)
          return (row: T) => {
            const order = comparePositions(
              columns.map((name) => row[name]!),
              values,
            )
            return match[2] === '>' ? order > 0 : order < 0
          }
        })
  const orderBy = sql.orderBy.split(', ').map((part) => {
    const [name, keyword] = part.split(' ') as [string, string]
    return { name: column(name), sign: keyword === 'ASC' ? 1 : -1 }
  })
  return rows
    .filter((row) => predicates.every((predicate) => predicate(row)))
    .sort((a, b) => {
      for (const { name, sign } of orderBy) {
        const order = comparePositions([a[name]!], [b[name]!])
        if (order !== 0) return sign * order
      }
      return 0
    })
    .slice(0, sql.limit)
}

test('the SQL selects the same rows in the same order as seekArray, for random data', () => {
  const data = fc.uniqueArray(
    fc.record({ id: fc.string({ maxLength: 3 }), k: fc.integer({ min: 0, max: 4 }) }),
    {
      selector: (row) => row.id,
      maxLength: 25,
    },
  )
  const bound = fc.option(fc.tuple(fc.integer({ min: -1, max: 5 }), fc.string({ maxLength: 3 })), {
    nil: undefined,
  })
  fc.assert(
    fc.property(
      data,
      fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
      fc.constantFrom<'forward' | 'backward'>('forward', 'backward'),
      fc.nat(8),
      bound,
      bound,
      (items, direction, paging, limit, after, before) => {
        const request: PageRequest = {
          order: { keys: ['k', 'id'], direction },
          direction: paging,
          limit,
          ...(after === undefined ? {} : { after }),
          ...(before === undefined ? {} : { before }),
        }
        expect(runSql(items, request)).toEqual(seekArray(items, request))
      },
    ),
    { numRuns: 1000, interruptAfterTimeLimit: 3000 },
  )
})
