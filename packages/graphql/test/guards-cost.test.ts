import {
  buildSchema,
  GraphQLInt,
  GraphQLList,
  GraphQLObjectType,
  GraphQLSchema,
  type OperationDefinitionNode,
  parse,
} from 'graphql'
import { fieldExtensionsEstimator, simpleEstimator } from 'graphql-query-complexity'
import { describe, expect, test } from 'vitest'
import { analyzeDocument, costDirectivesSDL, type GuardOptions } from '../src/index.ts'
import { operationOf, schema } from './guards-fixtures.ts'

function cost(
  source: string,
  variables: Record<string, unknown> = {},
  options: GuardOptions = {},
  on = schema,
) {
  const { document, operation } = operationOf(source)
  return analyzeDocument(on, document, options).cost(operation, variables)
}
const codes = (result: { errors: readonly { extensions: Record<string, unknown> }[] }) =>
  result.errors.map((error) => error.extensions['code'])

describe('cost: weights (IBM cost directives)', () => {
  test('scalars and enums cost 0, composite types 1', () => {
    expect(cost('{ answer }').cost).toBe(0)
    expect(cost('{ order(id: 1) { id customer { name } } }').cost).toBe(2)
  })

  test('@cost(weight:) on a field replaces its default, as a Float', () => {
    expect(cost('{ order(id: 1) { total } }').cost).toBe(3)
    expect(cost('{ items(first: 2) { price } }').cost).toBe(1 + 2 * 3.5)
  })

  test('@cost on the return type when the field has none', () => {
    expect(cost('{ heavy { name } }').cost).toBe(7)
  })

  test('extensions.cost on a code-first field', () => {
    const Row = new GraphQLObjectType({
      name: 'Row',
      fields: { n: { type: GraphQLInt, extensions: { cost: 4 } } },
    })
    const codeFirst = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: { row: { type: Row, extensions: { cost: 2 } } },
      }),
    })
    expect(cost('{ row { n } }', {}, {}, codeFirst).cost).toBe(6)
  })

  test('@cost on an argument adds its weight when the argument is sent', () => {
    const weighted = buildSchema(
      `${costDirectivesSDL} type Query { find(text: String @cost(weight: "5"), exact: Boolean): A } type A { b: Int }`,
    )
    expect(cost('{ find { b } }', {}, {}, weighted).cost).toBe(1)
    expect(cost('{ find(text: "x", exact: true) { b } }', {}, {}, weighted).cost).toBe(6)
    expect(cost('query($t: String) { find(text: $t) { b } }', {}, {}, weighted).cost).toBe(1)
    expect(cost('query($t: String) { find(text: $t) { b } }', { t: 'x' }, {}, weighted).cost).toBe(
      6,
    )
  })

  test('a negative weight floors the field at 0', () => {
    const negative = buildSchema(
      `${costDirectivesSDL} type Query { a: A @cost(weight: "-5") } type A { b: Int @cost(weight: "1") }`,
    )
    expect(cost('{ a { b } }', {}, {}, negative).cost).toBe(0)
  })

  test('a mutation starts at mutationCost (10 by default), a query at 0', () => {
    expect(cost('mutation { createOrder(total: 1) { id } }').cost).toBe(11)
    expect(cost('mutation { createOrder(total: 1) { id } }', {}, { mutationCost: 0 }).cost).toBe(1)
  })

  test('introspection meta fields cost 0', () => {
    expect(
      cost(
        '{ __typename __schema { types { name fields { name type { name } } } } __type(name: "Order") { name } }',
      ).cost,
    ).toBe(0)
  })

  test('duplicate fields count every time (no field merging: an upper bound)', () => {
    expect(cost('{ order(id: 1) { id } order(id: 1) { id } }').cost).toBe(2)
  })
})

describe('cost: list sizes', () => {
  test('a list without slicing arguments is multiplied by defaultListSize', () => {
    expect(cost('{ order(id: 1) { lines { price } } }').cost).toBe(1 + 1 + 10 * 3.5)
    expect(cost('{ order(id: 1) { lines { price } } }', {}, { defaultListSize: 2 }).cost).toBe(
      1 + 1 + 2 * 3.5,
    )
  })

  test('@listSize(slicingArguments:) takes the literal or the coerced variable', () => {
    expect(cost('{ items(first: 4) { price } }').cost).toBe(1 + 4 * 3.5)
    expect(cost('query($n: Int) { items(first: $n) { price } }', { n: 6 }).cost).toBe(1 + 6 * 3.5)
  })

  test('@listSize(assumedSize:) when no slicing argument', () => {
    expect(cost('{ recent { customer { name } } }').cost).toBe(1 + 5 * 1)
  })

  test('MUST: requireOneSlicingArgument with no slicing argument is SLICING_ARGUMENT_REQUIRED', () => {
    const result = cost('{ items { id } }')
    expect(result.errors[0]?.extensions).toEqual({
      code: 'SLICING_ARGUMENT_REQUIRED',
      field: 'Query.items',
      arguments: ['first'],
    })
    expect(codes(cost('query($n: Int) { items(first: $n) { id } }', {}))).toEqual([
      'SLICING_ARGUMENT_REQUIRED',
    ])
    expect(codes(cost('{ search { ... on Item { id } } }'))).toEqual([])
  })

  test('a slicing value over maxPageSize is PAGE_SIZE_EXCEEDED, once per field', () => {
    const result = cost('{ items(first: 101) { price } a: items(first: 500) { price } }')
    expect(result.errors[0]?.extensions).toEqual({
      code: 'PAGE_SIZE_EXCEEDED',
      field: 'Query.items',
      argument: 'first',
      limit: 100,
      actual: 101,
    })
    expect(codes(result)).toEqual(['PAGE_SIZE_EXCEEDED', 'COST_LIMIT_EXCEEDED'])
    expect(codes(cost('{ items(first: 100) { id } }'))).toEqual([])
  })

  test('Relay connection: first/last sizes edges and nodes only, the schema default counts as given', () => {
    // orders 1 + 20 × (edges 1 + node 1 + total 2) + pageInfo 1
    expect(cost('{ orders { edges { node { total } } pageInfo { hasNextPage } } }').cost).toBe(
      1 + 20 * 4 + 1,
    )
    expect(
      cost('query($n: Int) { orders(first: $n) { nodes { id } totalCount } }', { n: 3 }).cost,
    ).toBe(1 + 3 * 1)
    expect(cost('{ orders(last: 7) { nodes { id } } }').cost).toBe(1 + 20)
    expect(cost('{ orders(last: 7) { nodes { id } } }')).toMatchObject({ errors: [] })
  })

  test('requireOneSlicingArgument: several sent is SLICING_ARGUMENT_REQUIRED (the largest is costed); a default does not count', () => {
    const both = cost('{ orders(first: 2, last: 7) { nodes { id } } }')
    expect(both.cost).toBe(1 + 7)
    expect(both.errors.map((error) => [error.message, error.extensions])).toEqual([
      [
        'Query.orders takes only one of the arguments first, last.',
        { code: 'SLICING_ARGUMENT_REQUIRED', field: 'Query.orders', arguments: ['first', 'last'] },
      ],
    ])
    const source = 'query($f: Int, $l: Int) { orders(first: $f, last: $l) { nodes { id } } }'
    expect(codes(cost(source, { l: 3 }))).toEqual([])
    expect(codes(cost(source, { f: 3, l: 3 }))).toEqual(['SLICING_ARGUMENT_REQUIRED'])
    const search = buildSchema(
      `${costDirectivesSDL} type Query { s(a: Int, b: Int): [Q!]! @listSize(slicingArguments: ["a", "b"], requireOneSlicingArgument: false) } type Q { q: Q }`,
    )
    expect(cost('{ s(a: 2, b: 5) { q { q { q { __typename } } } } }', {}, {}, search)).toEqual({
      cost: 1 + 5 * 3,
      errors: [],
    })
  })

  test('sized fields are found through fragments and inline fragments of the connection', () => {
    const source =
      '{ orders(first: 3) { ...E ... on OrderConnection { pageInfo { endCursor } } } } fragment E on OrderConnection { edges { cursor } }'
    expect(cost(source).cost).toBe(1 + 3 * 1 + 1)
  })

  test('relayConnections: false treats a connection as a plain object', () => {
    expect(
      cost('{ orders(first: 3) { edges { node { id } } } }', {}, { relayConnections: false }).cost,
    ).toBe(1 + 1 + 10 * 1)
  })

  test('nested lists multiply', () => {
    // orders 1 + 5 × (edges 1 + node 1 + items(first: 4) (1 + 4 × price 3.5))
    const source =
      'query($a: Int, $b: Int) { orders(first: $a) { edges { node { items(first: $b) { price } } } } }'
    expect(cost(source, { a: 5, b: 4 }).cost).toBe(1 + 5 * (2 + 1 + 4 * 3.5))
  })
})

describe('cost: list wrappers, page values, sized children', () => {
  const lists = buildSchema(`${costDirectivesSDL}
    type Query {
      matrix: [[Order!]!]!
      cube: [[[Order]]] @listSize(assumedSize: 3)
      pages(first: Int): [[Order!]!]! @listSize(slicingArguments: ["first"])
      grid: [[Int]]
    }
    type Order { id: ID! items: [Item!]! }
    type Item { price: Int! @cost(weight: "3") }`)

  test('a list of lists multiplies once per wrapper: the size, then assumedSize or defaultListSize', () => {
    // matrix 1 + 10 × 10 × (Order: items 1 + 10 × 3)
    expect(cost('{ matrix { id items { price } } }', {}, {}, lists).cost).toBe(1 + 10 * 10 * 31)
    expect(cost('{ cube { id } }', {}, {}, lists).cost).toBe(1 + 3 * 3 * 3 * 0)
    expect(cost('{ cube { items { price } } }', {}, {}, lists).cost).toBe(1 + 27 * 31)
    expect(cost('{ pages(first: 2) { items { price } } }', {}, {}, lists).cost).toBe(
      1 + 2 * 10 * 31,
    )
    expect(cost('{ grid }', {}, {}, lists).cost).toBe(0) // a list of scalars costs its weight once
  })

  test('a negative or fractional slicing value is BAD_USER_INPUT, not a page of 0', () => {
    const negative = cost('{ items(first: -1) { id price } }')
    expect(negative.errors.map((error) => [error.message, error.extensions])).toEqual([
      [
        'Query.items(first: -1) must be a whole number of 0 or more.',
        { code: 'BAD_USER_INPUT', field: 'Query.items', argument: 'first', actual: -1 },
      ],
    ])
    // A variable can carry what an Int literal cannot (a custom scalar, a Float argument).
    const floats = buildSchema(
      `${costDirectivesSDL} type Query { list(first: Float): [Q!]! @listSize(slicingArguments: ["first"]) } type Q { id: ID }`,
    )
    const source = 'query($n: Float) { list(first: $n) { id } }'
    expect(codes(cost(source, { n: 2.5 }, {}, floats))).toEqual(['BAD_USER_INPUT'])
    expect(codes(cost(source, { n: Number.NaN }, {}, floats))).toEqual(['BAD_USER_INPUT'])
    expect(codes(cost(source, { n: 2 }, {}, floats))).toEqual([])
    expect(codes(cost('{ items(first: 0) { id } }'))).toEqual([])
  })

  test('a sized child is checked (page size, slicing arguments) though its parent sizes it', () => {
    const sized = buildSchema(`${costDirectivesSDL}
      type Query { feed(first: Int): Feed @listSize(slicingArguments: ["first"], sizedFields: ["nodes"]) }
      type Feed { nodes(first: Int): [Post!]! @listSize(slicingArguments: ["first"]) }
      type Post { id: ID! }`)
    const result = cost('{ feed(first: 2) { nodes(first: 100000) { id } } }', {}, {}, sized)
    expect(result.errors.map((error) => error.extensions)).toEqual([
      {
        code: 'PAGE_SIZE_EXCEEDED',
        field: 'Feed.nodes',
        argument: 'first',
        limit: 100,
        actual: 100_000,
      },
    ])
    // Not multiplied by its own size: feed 1 + 2 × (nodes 1 + 0).
    expect(result.cost).toBe(3)
    expect(codes(cost('{ feed(first: 2) { nodes { id } } }', {}, {}, sized))).toEqual([
      'SLICING_ARGUMENT_REQUIRED',
    ])
  })

  test('a list of scalars has its page checked', () => {
    const scalars = buildSchema(
      `${costDirectivesSDL} type Query { tags(first: Int): [String!]! @listSize(slicingArguments: ["first"]) }`,
    )
    expect(codes(cost('{ tags(first: 100000) }', {}, {}, scalars))).toEqual(['PAGE_SIZE_EXCEEDED'])
  })
})

describe('cost: selections', () => {
  test('an abstract type costs the maximum over its possible types', () => {
    // Order: id 0 + total 2 + customer 1; Item: price 3.5
    expect(
      cost('{ node(id: 1) { id ... on Order { total customer { name } } ... on Item { price } } }')
        .cost,
    ).toBe(1 + 3.5)
    expect(cost('{ search(limit: 2) { ... on Order { total customer { name } } } }').cost).toBe(
      1 + 2 * 3,
    )
  })

  test('a fragment on an interface applies to each implementation; one on another type does not', () => {
    const source =
      '{ order(id: 1) { ...N ...I } } fragment N on Node { ... on Order { total } } fragment I on Item { price }'
    expect(cost(source).cost).toBe(1 + 2)
  })

  test('@skip and @include follow the variables', () => {
    const source =
      'query($s: Boolean!, $i: Boolean!) { order(id: 1) @skip(if: $s) { id } heavy @include(if: $i) { name } }'
    expect(cost(source, { s: false, i: false }).cost).toBe(1)
    expect(cost(source, { s: true, i: true }).cost).toBe(7)
    expect(cost('{ heavy @include(if: true) @skip(if: true) { name } }').cost).toBe(0)
    expect(
      cost(
        '{ ... @skip(if: true) { heavy { name } } ...H @include(if: false) } fragment H on Query { heavy { name } }',
      ).cost,
    ).toBe(0)
  })

  test('over maxCost is COST_LIMIT_EXCEEDED with limit and actual', () => {
    const result = cost('{ order(id: 1) { total } }', {}, { maxCost: 2 })
    expect(result.errors.map((error) => [error.message, error.extensions])).toEqual([
      [
        'Query cost 3 exceeds the maximum of 2.',
        { code: 'COST_LIMIT_EXCEEDED', limit: 2, actual: 3 },
      ],
    ])
  })

  test('an operation without variables is costed once per analysis', () => {
    const { document, operation } = operationOf('{ order(id: 1) { total } }')
    const analysis = analyzeDocument(schema, document)
    expect(analysis.cost(operation, {})).toBe(analysis.cost(operation, {}))
    expect(analysis.cost(operation, {}).cost).toBe(3)
  })

  test('the cost is evaluated per call with that call’s variables', () => {
    const { document, operation } = operationOf('query($n: Int) { items(first: $n) { price } }')
    const analysis = analyzeDocument(schema, document)
    expect(analysis.cost(operation, { n: 2 }).cost).toBe(1 + 2 * 3.5)
    expect(analysis.cost(operation, { n: 50 }).cost).toBe(1 + 50 * 3.5)
  })
})

describe('cost: graphql-query-complexity estimators', () => {
  const Row: GraphQLObjectType = new GraphQLObjectType({
    name: 'Row',
    fields: { n: { type: GraphQLInt, extensions: { complexity: 5 } }, m: { type: GraphQLInt } },
  })
  const listSchema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: () => ({
        rows: {
          type: new GraphQLList(Row),
          args: { count: { type: GraphQLInt, defaultValue: 3 } },
          extensions: {
            complexity: ({
              args,
              childComplexity,
            }: {
              args: { count: number }
              childComplexity: number
            }) => args.count * childComplexity,
          },
        },
      }),
    }),
  })

  test('the first estimator that answers a number wins; coerced args and childComplexity as in gqc', () => {
    const estimators = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })]
    expect(cost('{ rows { n m } }', {}, { estimators }, listSchema).cost).toBe(3 * (5 + 1))
    expect(
      cost('query($c: Int) { rows(count: $c) { n } }', { c: 4 }, { estimators }, listSchema).cost,
    ).toBe(4 * 5)
  })

  test('no estimator answering falls back to the directive model', () => {
    expect(
      cost('{ rows(count: 2) { n } }', {}, { estimators: [() => undefined] }, listSchema).cost,
    ).toBe(1 + 10 * 0)
  })

  test('each field asks the estimators once, however the children are costed (no re-walk: linear)', () => {
    const source =
      '{ orders(first: 2) { edges { node { items(first: 2) { price } } } pageInfo { hasNextPage } } }'
    const asked: string[] = []
    const result = cost(source, {}, { estimators: [({ field }) => void asked.push(field.name)] })
    expect(asked.sort()).toEqual([
      'edges',
      'hasNextPage',
      'items',
      'node',
      'orders',
      'pageInfo',
      'price',
    ])
    expect(result.cost).toBe(cost(source).cost)
  })

  test('the context reaches the estimators', () => {
    const { document, operation } = operationOf('{ answer }')
    const seen: unknown[] = []
    analyzeDocument(schema, document, {
      estimators: [({ context }) => void seen.push(context)],
    }).cost(operation, {}, { user: 1 })
    expect(seen).toEqual([{ user: 1 }])
  })

  test('an estimator that throws gives a coded error, not an exception', () => {
    const result = cost(
      '{ answer }',
      {},
      {
        estimators: [
          () => {
            throw new Error('boom')
          },
        ],
      },
    )
    expect(codes(result)).toEqual(['INTERNAL_SERVER_ERROR'])
  })
})

test('cost never throws on documents that skipped validation (unknown fields, types, fragments, cycles)', () => {
  const document = parse(
    '{ nope { x } ...Missing ... on Nope { y } ...A order(id: 1) { ...B } } fragment A on Query { ...A } fragment B on Nope { z }',
  )
  const operation = document.definitions[0] as OperationDefinitionNode
  expect(analyzeDocument(schema, document).cost(operation, {})).toEqual({ cost: 1, errors: [] })
})
