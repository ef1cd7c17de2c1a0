// The hostile-document table (issue 16): each document is refused with its code by the guard
// pass (or the parser's token limit) and none throws, overflows the stack or expands fragments.

import fc from 'fast-check'
import {
  buildSchema,
  type DocumentNode,
  type FieldNode,
  GraphQLError,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  specifiedRules,
  validate,
} from 'graphql'
import { describe, expect, test } from 'vitest'
import { analyzeDocument, type GuardOptions, parseDocument } from '../src/index.ts'
import { schema } from './guards-fixtures.ts'

/** parseDocument, then the static guards, then (only if those pass) the cost: the first refusal's codes. */
function refusal(
  source: string,
  options: GuardOptions = {},
): { codes: string[]; actual?: unknown } {
  const document = parseDocument(source, options)
  if (document instanceof GraphQLError) return { codes: [String(document.extensions['code'])] }
  const analysis = analyzeDocument(schema, document, options)
  const operation = document.definitions.find(
    (d) => d.kind === Kind.OPERATION_DEFINITION,
  ) as OperationDefinitionNode
  const { errors } = analysis.operation(operation)
  const refused = errors.length > 0 ? errors : analysis.cost(operation, {}).errors
  return {
    codes: refused.map((e) => String(e.extensions['code'])),
    actual: refused[0]?.extensions['actual'],
  }
}

function doubling(levels: number): string {
  let source = `{ ...F${levels} }\nfragment F0 on Query { answer }\n`
  for (let i = 1; i <= levels; i++)
    source += `fragment F${i} on Query { ...F${i - 1} ...F${i - 1} }\n`
  return source
}

const aliases = (n: number) =>
  `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`
const nested = (n: number) =>
  `{ ${'order(id: 1) { customer { '.repeat(Math.ceil(n / 2))}name${' } }'.repeat(Math.ceil(n / 2))} }`
const ofType = (n: number) =>
  `{ __schema { types { ${'ofType { '.repeat(n)}name${' }'.repeat(n)} } } }`
const directives = (n: number) => `{ answer ${'@include(if: true) '.repeat(n)}}`
const big = { maxTokens: 1_000_000 }
const variables = (n: number) =>
  `query(${Array.from({ length: n }, (_, i) => `$v${i}: Int @x`).join(', ')}) { answer }`

describe('hostile documents are refused with a code, none throws', () => {
  test.each([
    // Every expanded `answer` shares one response name: the repeats are as astronomic.
    [
      'fragment doubling to 2^30 nodes',
      ['NODE_LIMIT_EXCEEDED', 'FIELD_REPEAT_LIMIT_EXCEEDED'],
      doubling(30),
      {},
      2 ** 30,
    ],
    [
      'fragment doubling to 2^100 nodes',
      ['NODE_LIMIT_EXCEEDED', 'FIELD_REPEAT_LIMIT_EXCEEDED'],
      doubling(100),
      {},
      2 ** 100,
    ],
    ['10,000 aliases (token limit first)', 'TOKEN_LIMIT_EXCEEDED', aliases(10_000), {}, undefined],
    [
      '10,000 __typename aliases (tokens allowed)',
      'ALIAS_LIMIT_EXCEEDED',
      aliases(10_000),
      big,
      10_000,
    ],
    ['depth 1,000', 'DEPTH_LIMIT_EXCEEDED', nested(1_000), {}, 1_001],
    ['a 1,000-deep ofType chain', 'DEPTH_LIMIT_EXCEEDED', ofType(1_000), {}, 1_003],
    [
      '5,000 directives on one field (token limit first)',
      'TOKEN_LIMIT_EXCEEDED',
      directives(5_000),
      {},
      undefined,
    ],
    ['1,000 directives on one field', 'DIRECTIVE_LIMIT_EXCEEDED', directives(1_000), {}, 1_000],
    ['3,000 variable definitions', 'TOKEN_LIMIT_EXCEEDED', variables(3_000), {}, undefined],
    [
      '1,000 variable definitions with a directive each',
      'DIRECTIVE_LIMIT_EXCEEDED',
      variables(1_000),
      big,
      1_000,
    ],
    ['a page of 10,000', 'PAGE_SIZE_EXCEEDED', '{ items(first: 10000) { id } }', {}, 10_000],
    // graphql-js OverlappingFieldsCanBeMerged is quadratic in selections sharing a response name.
    [
      '1,200 × order { id } in one set',
      'FIELD_REPEAT_LIMIT_EXCEEDED',
      `{${' order { id }'.repeat(1_200)} }`,
      {},
      1_200,
    ],
    [
      '1,600 × echo with different arguments',
      'FIELD_REPEAT_LIMIT_EXCEEDED',
      `{${Array.from({ length: 1_600 }, (_, i) => ` order(id: ${i})`).join('')} }`,
      {},
      1_600,
    ],
    [
      'a fragment of 1,200 × order { id } spread twice',
      'FIELD_REPEAT_LIMIT_EXCEEDED',
      `{ ...F ...F }\nfragment F on Query {${' order(id: 1) { id }'.repeat(1_200)} }`,
      big,
      2_400,
    ],
    [
      '60 × order { customer { name } } nested in 2 × 60 inline fragments',
      'FIELD_REPEAT_LIMIT_EXCEEDED',
      `{ ... on Query {${' order(id: 1) { customer { name } }'.repeat(60)} } ... {${' order(id: 1) { customer { name } }'.repeat(60)} } }`,
      {},
      120,
    ],
    [
      '30 × order { 30 × customer { name } }: 900 customers in one merged set',
      'FIELD_REPEAT_LIMIT_EXCEEDED',
      `{${` order {${' customer { name }'.repeat(30)} }`.repeat(30)} }`,
      {},
      900,
    ],
    ['a negative page', 'BAD_USER_INPUT', '{ items(first: -1) { id } }', {}, -1],

    [
      'nested lists at the page cap',
      'COST_LIMIT_EXCEEDED',
      '{ orders(first: 100) { edges { node { items(first: 100) { price } } } } }',
      {},
      1 + 100 * (2 + 1 + 100 * 3.5),
    ],
  ] as const)('%s → %s', (_, code, source, options, actual) => {
    const result = refusal(source, options)
    expect(result.codes).toEqual([code].flat())
    if (actual !== undefined) expect(result.actual).toBe(actual)
  })

  test('depth 5,000 in text: refused by the token limit, or by the parser when its stack gives out first (GRAPHQL_PARSE_FAILED, caught)', () => {
    // graphql-js parses recursively: depending on the engine's frame sizes it overflows
    // somewhere past 1,900 levels, before 10,000 tokens; parseDocument turns that into a code.
    for (const source of [nested(5_000), `{${'a{'.repeat(5_000)}b${'}'.repeat(5_001)}`]) {
      expect(['TOKEN_LIMIT_EXCEEDED', 'GRAPHQL_PARSE_FAILED']).toContain(refusal(source).codes[0])
    }
  })

  test('fragment doubling is costed through the memo: the cost is the true total', () => {
    const document = parseDocument(doubling(60)) as DocumentNode
    const operation = document.definitions[0] as OperationDefinitionNode
    const analysis = analyzeDocument(schema, document, { maxNodes: Number.POSITIVE_INFINITY })
    expect(analysis.operation(operation).nodes).toBe(2 ** 60)
    // Each F0 costs 0 (a scalar): wrap it in an object field to make the cost count.
    const costly = parseDocument(
      doubling(60).replace('{ answer }', '{ heavy { name } }'),
    ) as DocumentNode
    const costlyOperation = costly.definitions[0] as OperationDefinitionNode
    const result = analyzeDocument(schema, costly).cost(costlyOperation, {})
    expect(result.cost).toBe(7 * 2 ** 60)
    expect(result.errors[0]?.extensions['code']).toBe('COST_LIMIT_EXCEEDED')
  })

  test('doubling past 2^1024 (over the default token limit) overflows to Infinity: still refused, a zero page never makes the cost NaN', () => {
    const source = doubling(1_100).replace('{ answer }', '{ heavy { name } }')
    expect(refusal(source, big)).toEqual({
      codes: ['NODE_LIMIT_EXCEEDED', 'FIELD_REPEAT_LIMIT_EXCEEDED'],
      actual: Number.POSITIVE_INFINITY,
    })
    const zeroPage = parseDocument(
      `{ items(first: 0) { ...F1100 } }\n${source
        .slice(source.indexOf('\n') + 1)
        .replaceAll(' on Query', ' on Item')
        .replace('{ heavy { name } }', '{ price }')}`,
      big,
    ) as DocumentNode
    const operation = zeroPage.definitions[0] as OperationDefinitionNode
    const result = analyzeDocument(schema, zeroPage).cost(operation, {})
    expect(result.cost).toBe(Number.POSITIVE_INFINITY)
    expect(result.errors.map((e) => e.extensions['code'])).toEqual(['COST_LIMIT_EXCEEDED'])
  })

  test('introspection amplification (nested fields { type { fields … } }) costs 0 here: graphql-js validation refuses it', () => {
    // Introspection costs 0 (answered from memory), but nested lists of it multiply the answer;
    // graphql-js >= 16.9 bounds that with MaxIntrospectionDepthRule in specifiedRules.
    const source =
      '{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }'
    const document = parseDocument(source) as DocumentNode
    const operation = document.definitions[0] as OperationDefinitionNode
    const analysis = analyzeDocument(schema, document)
    expect(analysis.operation(operation).errors).toEqual([])
    expect(analysis.cost(operation, {}).cost).toBe(0)
    expect(validate(schema, document, specifiedRules).map((e) => e.message)).toEqual([
      'Maximum introspection depth exceeded',
    ])
  })

  test('fragment cycles: the guards terminate with finite counts, validation reports the cycle', () => {
    const source = `{ ...A } fragment A on Query { answer ...B ...B } fragment B on Query { tags ...A ...C } fragment C on Query { ...B ...A ...C }`
    const document = parseDocument(source) as DocumentNode
    const operation = document.definitions[0] as OperationDefinitionNode
    const analysis = analyzeDocument(schema, document)
    expect(analysis.operation(operation)).toMatchObject({ nodes: 3, errors: [] })
    expect(analysis.cost(operation, {})).toEqual({ cost: 0, errors: [] })
    expect(validate(schema, document, specifiedRules).map((e) => e.message)).toContain(
      'Cannot spread fragment "A" within itself via "B".',
    )
  })

  test('depth 5,000 and 100,000 built as syntax trees (past what the parser accepts): exact depth, no stack overflow', () => {
    for (const depth of [5_000, 100_000]) {
      let selectionSet: SelectionSetNode = { kind: Kind.SELECTION_SET, selections: [field('name')] }
      for (let i = 1; i < depth; i++)
        selectionSet = {
          kind: Kind.SELECTION_SET,
          selections: [field(i % 2 ? 'customer' : 'order', selectionSet)],
        }
      const operation: OperationDefinitionNode = {
        kind: Kind.OPERATION_DEFINITION,
        operation: 'query' as never,
        selectionSet,
      }
      const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [operation] }
      const analysis = analyzeDocument(schema, document)
      const result = analysis.operation(operation)
      expect(result.depth).toBe(depth)
      expect(result.errors[0]?.extensions).toEqual({
        code: 'DEPTH_LIMIT_EXCEEDED',
        limit: 20,
        actual: depth,
      })
      // Cost is only for validated documents, yet even here it answers instead of throwing.
      expect(() => analysis.cost(operation, {})).not.toThrow()
    }
  })

  test('nested connections of an abstract type are costed once per selection set (memoised), not per path', () => {
    const implementations = Array.from({ length: 12 }, (_, i) => `C${i}Connection`)
    const abstract = buildSchema(`
      type Query { conn(first: Int): ThingConnection }
      interface ThingConnection { edges: [E!]! }
      ${implementations.map((name) => `type ${name} implements ThingConnection { edges: [E!]! }`).join('\n')}
      type E { node: T }
      type T { conn(first: Int): ThingConnection id: ID }`)
    // 40 levels: 12^40 paths without the memo. Each level: conn 1 + 1 × (edges 1 + node 1 + …).
    const levels = 40
    const source = `{ ${'conn(first: 1) { edges { node { '.repeat(levels)}id${' } } }'.repeat(levels)} }`
    const document = parseDocument(source) as DocumentNode
    const operation = document.definitions[0] as OperationDefinitionNode
    expect(analyzeDocument(abstract, document, { maxCost: 1e9 }).cost(operation, {})).toEqual({
      cost: 3 * levels,
      errors: [],
    })
  })

  test('a document with 200 fragments spreading each other 50 times is measured once per fragment', () => {
    let source = '{ ...F0 }\n'
    for (let i = 0; i < 200; i++) {
      const spreads = Array.from(
        { length: 50 },
        (_, j) => `...F${Math.min(199, i + 1 + (j % 5))}`,
      ).join(' ')
      source += `fragment F${i} on Query { answer ${i < 199 ? spreads : ''} }\n`
    }
    const result = refusal(source, big)
    expect(result.codes).toEqual(['NODE_LIMIT_EXCEEDED', 'FIELD_REPEAT_LIMIT_EXCEEDED'])
    expect(result.actual).toBeGreaterThan(1e100)
  })
})

function field(name: string, selectionSet?: SelectionSetNode): FieldNode {
  return {
    kind: Kind.FIELD,
    name: { kind: Kind.NAME, value: name },
    ...(selectionSet ? { selectionSet } : {}),
  } as FieldNode
}

describe('property: no input makes the guard pass throw', () => {
  const tokens = [
    '{',
    '}',
    '{',
    '}',
    '(',
    ')',
    ':',
    '...',
    'on',
    'fragment',
    'query',
    'mutation',
    'F',
    'G',
    'Order',
    'Query',
    'Node',
    'SearchResult',
    'Nope',
    'order',
    'orders',
    'items',
    'search',
    'node',
    'customer',
    'edges',
    'price',
    'first',
    'id',
    'a:',
    '__typename',
    '__schema',
    'types',
    'ofType',
    '@skip(if: $b)',
    '@include(if: true)',
    '@x',
    '$n',
    '$b',
    '1',
    '500',
    '-3',
    '"s"',
    'null',
    '[',
    ']',
    '=',
    '!',
    'Int',
    'Boolean',
    '#c\n',
    '"""',
    '$',
    '&',
    ' ',
  ]
  test('arbitrary token soup: parseDocument answers a document or a coded error; analysis and cost answer', () => {
    let parsed = 0
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...tokens), { maxLength: 80 }),
        fc.dictionary(
          fc.constantFrom('n', 'b'),
          fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)),
        ),
        (soup, variables) => {
          const document = parseDocument(soup.join(' '), { maxTokens: 500 })
          if (document instanceof GraphQLError) {
            expect(['GRAPHQL_PARSE_FAILED', 'TOKEN_LIMIT_EXCEEDED']).toContain(
              document.extensions['code'],
            )
            return
          }
          parsed++
          const analysis = analyzeDocument(schema, document, {
            estimators: parsed % 2 ? [] : [({ childComplexity }) => childComplexity + 1],
          })
          for (const definition of document.definitions) {
            if (definition.kind !== Kind.OPERATION_DEFINITION) continue
            const measures = analysis.operation(definition)
            expect(Number.isFinite(measures.nodes)).toBe(true)
            const { cost, errors } = analysis.cost(definition, variables)
            expect(cost).toBeGreaterThanOrEqual(0)
            for (const error of errors) expect(error.extensions['code']).toMatch(/^[A-Z_]+$/)
          }
        },
      ),
      { numRuns: 3_000, interruptAfterTimeLimit: 3_000 },
    )
  })

  test('generated selection trees that parse: analysis and cost answer on every operation', () => {
    const selection: fc.Memo<string> = fc.memo((n) =>
      n <= 1
        ? fc.constantFrom('id', 'price', '__typename', 'x: id', 'nope', '...F', '...G')
        : fc.oneof(
            fc.constantFrom('id', '...F', '...G'),
            fc
              .tuple(
                fc.constantFrom(
                  'order(id: 1)',
                  'orders(first: $n)',
                  'items',
                  'search(limit: 5)',
                  'node',
                  'customer',
                  'edges',
                  'nodes',
                  'x: node',
                ),
                fc.array(selection(n - 1), { minLength: 1, maxLength: 4 }),
              )
              .map(([f, s]) => `${f} { ${s.join(' ')} }`),
            fc
              .tuple(
                fc.constantFrom(
                  '... on Order',
                  '... on Item',
                  '... on Node',
                  '... @skip(if: $b)',
                  '...',
                ),
                fc.array(selection(n - 1), { minLength: 1, maxLength: 3 }),
              )
              .map(([f, s]) => `${f} { ${s.join(' ')} }`),
          ),
    )
    const body = fc
      .array(selection(5), { minLength: 1, maxLength: 4 })
      .map((s) => `{ ${s.join(' ')} }`)
    fc.assert(
      fc.property(
        body,
        body,
        body,
        fc.integer({ min: -5, max: 200 }),
        fc.boolean(),
        (op, f, g, n, b) => {
          const source = `query($n: Int, $b: Boolean!) ${op} fragment F on Order ${f} fragment G on Node ${g}`
          const document = parseDocument(source, { maxTokens: 100_000 }) as DocumentNode
          const operation = document.definitions[0] as OperationDefinitionNode
          const analysis = analyzeDocument(schema, document)
          expect(analysis.operation(operation).depth).toBeGreaterThanOrEqual(0)
          expect(analysis.cost(operation, { n, b }).cost).toBeGreaterThanOrEqual(0)
        },
      ),
      { numRuns: 500, interruptAfterTimeLimit: 3_000 },
    )
  })
})
