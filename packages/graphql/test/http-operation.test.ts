import { createHash } from 'node:crypto'
import type { GraphQLError, OperationDefinitionNode } from 'graphql'
import { buildSchema, getIntrospectionQuery } from 'graphql'
import { describe, expect, test } from 'vitest'
import type { OperationRequest, PreparedOperation } from '../src/index.ts'
import {
  analyzeDocument,
  codedError,
  costDirectivesSDL,
  createOperationPreparer,
} from '../src/index.ts'
import { MemoryPersistedDocumentStore } from '../src/stores.ts'

const schema = buildSchema(`
  ${costDirectivesSDL}
  enum Color { RED GREEN }
  type Item { id: ID! name: String related(first: Int): [Item!]! }
  type Query {
    item(id: ID!): Item
    items(first: Int): [Item!]! @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)
    color(c: Color!): Color
    hello: String
  }
  type Mutation { add(n: Int!): Int }
`)

function codes(result: PreparedOperation | readonly GraphQLError[]): unknown[] {
  expect(Array.isArray(result)).toBe(true)
  return (result as readonly GraphQLError[]).map((error) => error.extensions['code'])
}

function prepared(result: PreparedOperation | readonly GraphQLError[]): PreparedOperation {
  if (Array.isArray(result)) throw new Error(`refused: ${JSON.stringify(result)}`)
  return result as PreparedOperation
}

describe('createOperationPreparer', () => {
  const preparer = createOperationPreparer({ schema })

  test('prepares a valid operation with its cost under the variables', async () => {
    const result = prepared(
      await preparer.prepare({
        query: 'query ($n: Int) { items(first: $n) { id related(first: 2) { name } } }',
        variables: { n: 7 },
      }),
    )
    expect(result.operation.operation).toBe('query')
    expect(result.variableValues).toEqual({ n: 7 })
    // The guard pass's cost under the coerced variables (its model is tested with the guards).
    const expected = (n: number) =>
      analyzeDocument(schema, result.document).cost(result.operation, { n }).cost
    expect(result.cost).toBe(expected(7))
    const larger = prepared(
      await preparer.prepare({
        query: 'query ($n: Int) { items(first: $n) { id related(first: 2) { name } } }',
        variables: { n: 70 },
      }),
    )
    expect(larger.cost).toBe(expected(70))
    expect(larger.cost).toBeGreaterThan(result.cost)
  })

  test('checks each member of the request before graphql-js sees it (BAD_REQUEST)', async () => {
    const bad: OperationRequest[] = [
      { query: '{ hello }', variables: [] },
      { query: '{ hello }', variables: 'x' },
      { query: 7 },
      { query: '{ hello }', operationName: 1 },
      { query: '{ hello }', extensions: [] },
      { documentId: 5 },
      {},
      { query: null },
    ]
    for (const request of bad)
      expect(codes(await preparer.prepare(request))).toEqual(['BAD_REQUEST'])
    expect(codes(await preparer.prepare(null as unknown as OperationRequest))).toEqual([
      'BAD_REQUEST',
    ])
  })

  test('null members count as absent', async () => {
    const result = await preparer.prepare({
      query: '{ hello }',
      variables: null,
      operationName: null,
      extensions: null,
      documentId: null,
    })
    expect(Array.isArray(result)).toBe(false)
    // GraphQL-over-HTTP §4.3: an empty operationName is the same as none.
    expect(Array.isArray(await preparer.prepare({ query: '{ hello }', operationName: '' }))).toBe(
      false,
    )
  })

  test('parse errors keep their locations (GRAPHQL_PARSE_FAILED)', async () => {
    const result = await preparer.prepare({ query: '{ hello' })
    expect(codes(result)).toEqual(['GRAPHQL_PARSE_FAILED'])
    expect((result as GraphQLError[])[0]?.locations).toEqual([{ line: 1, column: 8 }])
  })

  test('validation errors are coded GRAPHQL_VALIDATION_FAILED, suggestions kept while introspection is on', async () => {
    const result = await preparer.prepare({ query: '{ helo }' })
    expect(codes(result)).toEqual(['GRAPHQL_VALIDATION_FAILED'])
    expect((result as GraphQLError[])[0]?.message).toContain('Did you mean "hello"?')
  })

  test('guards run before validation, over every operation of the document', async () => {
    // Distinct aliases: 40 times `a: hello` would also be FIELD_REPEAT_LIMIT_EXCEEDED.
    const aliased = Array.from({ length: 40 }, (_, i) => `a${i}: hello`).join(' ')
    const deep = `query Deep { ${aliased} }`
    expect(codes(await preparer.prepare({ query: deep }))).toEqual(['ALIAS_LIMIT_EXCEEDED'])
    // The hostile operation is not the one selected: still refused, since validate walks it.
    const two = `query Ok { hello } query Bad { ${aliased} }`
    expect(codes(await preparer.prepare({ query: two, operationName: 'Ok' }))).toEqual([
      'ALIAS_LIMIT_EXCEEDED',
    ])
  })

  test('operation selection: OPERATION_NOT_FOUND', async () => {
    const query = 'query A { hello } query B { hello }'
    expect(codes(await preparer.prepare({ query }))).toEqual(['OPERATION_NOT_FOUND'])
    expect(codes(await preparer.prepare({ query, operationName: 'C' }))).toEqual([
      'OPERATION_NOT_FOUND',
    ])
    const b = prepared(await preparer.prepare({ query, operationName: 'B' }))
    expect(b.operation.name?.value).toBe('B')
  })

  test('variables that do not coerce: BAD_USER_INPUT', async () => {
    const query = 'query ($id: ID!) { item(id: $id) { id } }'
    expect(codes(await preparer.prepare({ query, variables: {} }))).toEqual(['BAD_USER_INPUT'])
    expect(codes(await preparer.prepare({ query, variables: { id: { no: 1 } } }))).toEqual([
      'BAD_USER_INPUT',
    ])
  })

  test('variables are handed on as sent, not coerced (execute coerces them itself)', async () => {
    const result = prepared(
      await preparer.prepare({
        query: 'query ($c: Color!) { color(c: $c) }',
        variables: { c: 'RED' },
      }),
    )
    expect(result.variableValues).toEqual({ c: 'RED' })
  })

  test('cost over the limit: COST_LIMIT_EXCEEDED with the numbers', async () => {
    const strict = createOperationPreparer({ schema, guards: { maxCost: 5 } })
    const result = await strict.prepare({
      query: '{ items(first: 50) { related(first: 50) { id } } }',
    })
    expect(codes(result)).toEqual(['COST_LIMIT_EXCEEDED'])
    expect((result as GraphQLError[])[0]?.extensions).toMatchObject({ limit: 5 })
  })

  test('introspection off: INTROSPECTION_DISABLED, and suggestions masked', async () => {
    const closed = createOperationPreparer({ schema, introspection: false })
    // One error, however many fields of introspection types the document asks for (graphql-js
    // reports each: 39 for the standard introspection query).
    expect(codes(await closed.prepare({ query: '{ __schema { queryType { name } } }' }))).toEqual([
      'INTROSPECTION_DISABLED',
    ])
    expect(codes(await closed.prepare({ query: getIntrospectionQuery() }))).toEqual([
      'INTROSPECTION_DISABLED',
    ])
    expect(codes(await closed.prepare({ query: '{ __type(name: "Item") { name } }' }))).toEqual([
      'INTROSPECTION_DISABLED',
    ])
    expect(Array.isArray(await closed.prepare({ query: '{ __typename }' }))).toBe(false)
    const misspelt = (await closed.prepare({ query: '{ helo }' })) as GraphQLError[]
    expect(misspelt[0]?.message).toBe('Cannot query field "helo" on type "Query".')
    const badEnum = (await closed.prepare({
      query: 'query ($c: Color!) { color(c: $c) }',
      variables: { c: 'REDD' },
    })) as GraphQLError[]
    expect(badEnum[0]?.extensions['code']).toBe('BAD_USER_INPUT')
    expect(badEnum[0]?.message).not.toContain('Did you mean')
  })

  test('the standard introspection query passes the default limits', async () => {
    expect(Array.isArray(await preparer.prepare({ query: getIntrospectionQuery() }))).toBe(false)
  })

  test('the cache keeps at most maxDocuments documents and answers the same for a hit', async () => {
    const small = createOperationPreparer({ schema, maxDocuments: 2 })
    const first = prepared(await small.prepare({ query: '{ hello }' }))
    expect(prepared(await small.prepare({ query: '{ hello }' })).document).toBe(first.document)
    await small.prepare({ query: '{ a: hello }' })
    await small.prepare({ query: '{ b: hello }' })
    // Evicted: parsed again, a new document.
    expect(prepared(await small.prepare({ query: '{ hello }' })).document).not.toBe(first.document)
    // Cached refusals answer the same.
    expect(codes(await small.prepare({ query: '{ nope }' }))).toEqual(['GRAPHQL_VALIDATION_FAILED'])
    expect(codes(await small.prepare({ query: '{ nope }' }))).toEqual(['GRAPHQL_VALIDATION_FAILED'])
  })

  test('never throws on hostile input', async () => {
    const hostile: OperationRequest[] = [
      { query: `{ ${'item(id: 1) { '.repeat(1000)}${'}'.repeat(1000)} }` },
      { query: `query Q { ...A } fragment A on Query { ...B } fragment B on Query { ...A }` },
      { query: `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: hello`).join(' ')} }` },
      {
        query: 'query ($ids: [ID!]!) { hello }',
        variables: { ids: [...Array.from({ length: 100_000 }, () => 1), null] },
      },
      { query: '\u0000\uffff{' },
    ]
    for (const request of hostile) {
      const result = await preparer.prepare(request)
      expect(Array.isArray(result)).toBe(true)
      for (const error of result as GraphQLError[])
        expect(typeof error.extensions['code']).toBe('string')
    }
  })

  test('a persisted store that fails to answer is an INTERNAL_SERVER_ERROR, reported', async () => {
    const reported: unknown[] = []
    const failing = createOperationPreparer({
      schema,
      persistedQueries: {
        store: {
          get: () => Promise.reject(new Error('down')),
          set: () => Promise.reject(new Error('down')),
        },
      },
      onError: (error) => reported.push(error),
    })
    expect(codes(await failing.prepare({ documentId: 'sha256:'.padEnd(71, '0') }))).toEqual([
      'INTERNAL_SERVER_ERROR',
    ])
    expect(reported).toHaveLength(1)
  })

  test('default store is bounded and used for APQ registration', async () => {
    const store = new MemoryPersistedDocumentStore({ maxDocuments: 10 })
    const apq = createOperationPreparer({ schema, persistedQueries: { store } })
    const hash = createHash('sha256').update('{ __typename }').digest('hex')
    const extensions = { persistedQuery: { version: 1, sha256Hash: hash } }
    expect(codes(await apq.prepare({ extensions }))).toEqual(['PERSISTED_QUERY_NOT_FOUND'])
    const registering = prepared(await apq.prepare({ query: '{ __typename }', extensions }))
    // Prepared is not admitted: the transport stores the document once it admits the operation.
    expect(await store.get(`sha256:${hash}`)).toBeUndefined()
    await registering.register()
    expect(await store.get(`sha256:${hash}`)).toBe('{ __typename }')
    expect(Array.isArray(await apq.prepare({ extensions }))).toBe(false)
  })

  test('allow refuses the operation before its variables and its cost', async () => {
    const refusal = codedError('METHOD_NOT_ALLOWED', 'no')
    const seen: string[] = []
    const allow = (operation: OperationDefinitionNode) => {
      seen.push(operation.operation)
      return operation.operation === 'query' ? refusal : undefined
    }
    // Over the cost limit and with a variable that does not coerce: still the method's refusal.
    const query = 'query ($n: Int!) { a: items(first: 100000) { id } b: items(first: $n) { id } }'
    expect(await preparer.prepare({ query, variables: {} }, { allow })).toEqual([refusal])
    expect(seen).toEqual(['query'])
  })

  test('variables and extensions nested deeper than 64 levels: BAD_REQUEST naming the limit', async () => {
    const recursive = createOperationPreparer({
      schema: buildSchema('input Y { y: [Y] leaf: Int } type Query { f(y: Y): Int }'),
    })
    const query = 'query ($y: Y) { f(y: $y) }'
    const nest = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = { leaf: 1 }
      // `{ y: [value] }` adds two levels (an object and an array).
      for (let level = 1; level < levels; level += 2) value = { y: [value] }
      return value
    }
    // variables (1) + 63 levels: accepted.
    expect(Array.isArray(await recursive.prepare({ query, variables: { y: nest(63) } }))).toBe(
      false,
    )
    for (const variables of [{ y: nest(65) }, { y: nest(24_000) }]) {
      const errors = (await recursive.prepare({ query, variables })) as GraphQLError[]
      expect(errors.map((error) => [error.message, error.extensions])).toEqual([
        ['variables nest deeper than 64 levels.', { code: 'BAD_REQUEST', limit: 64 }],
      ])
    }
    // Arrays count as objects do: extensions (1) + 63 arrays is the most accepted.
    const arrays = (levels: number): unknown[] => {
      let value: unknown[] = []
      for (let level = 1; level < levels; level++) value = [value]
      return value
    }
    expect(
      Array.isArray(await recursive.prepare({ query: '{ f }', extensions: { a: arrays(63) } })),
    ).toBe(false)
    for (const levels of [64, 24_000]) {
      const errors = (await recursive.prepare({
        query: '{ f }',
        extensions: { a: arrays(levels) },
      })) as GraphQLError[]
      expect(errors.map((error) => [error.message, error.extensions])).toEqual([
        ['extensions nest deeper than 64 levels.', { code: 'BAD_REQUEST', limit: 64 }],
      ])
    }
    // A cycle given through the API ends the walk too.
    const cycle: Record<string, unknown> = {}
    cycle['y'] = [cycle]
    expect(codes(await recursive.prepare({ query, variables: { y: cycle } }))).toEqual([
      'INTERNAL_SERVER_ERROR',
    ])
  })

  test('what coercing variables throws is a masked INTERNAL_SERVER_ERROR, told to onError', async () => {
    const reported: unknown[] = []
    const strict = createOperationPreparer({
      schema: buildSchema('input Y { y: [Y] leaf: Int } type Query { f(y: Y): Int }'),
      onError: (error) => reported.push(error),
    })
    // graphql-js reads every field of the input type, `leaf` from the prototype here, and the
    // getter throws: not a fault of the input the client can fix.
    const hostile = Object.create({
      get leaf() {
        throw new RangeError('Maximum call stack size exceeded')
      },
    }) as Record<string, unknown>
    const errors = (await strict.prepare({
      query: 'query ($y: Y) { f(y: $y) }',
      variables: { y: hostile },
    })) as GraphQLError[]
    expect(errors.map((error) => [error.message, error.extensions])).toEqual([
      ['Internal server error.', { code: 'INTERNAL_SERVER_ERROR' }],
    ])
    expect(reported).toEqual([new RangeError('Maximum call stack size exceeded')])
  })
})
