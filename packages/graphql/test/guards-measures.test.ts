import { GraphQLError, getIntrospectionQuery, type OperationDefinitionNode } from 'graphql'
import { getIntrospectionQuery as getIntrospectionQuery17 } from 'graphql17'
import { describe, expect, test } from 'vitest'
import { analyzeDocument, DEFAULT_GUARD_OPTIONS, parseDocument } from '../src/index.ts'
import { operationOf, schema } from './guards-fixtures.ts'

function measure(source: string, options = {}) {
  const { document, operation } = operationOf(source)
  return analyzeDocument(schema, document, options).operation(operation)
}

describe('parseDocument', () => {
  test('parses with locations', () => {
    const document = parseDocument('{ answer }')
    expect(document).not.toBeInstanceOf(GraphQLError)
    expect((document as { loc?: unknown }).loc).toBeDefined()
  })

  test('a syntax error is GRAPHQL_PARSE_FAILED with its locations, never thrown', () => {
    const error = parseDocument('{ answer(') as GraphQLError
    expect(error).toBeInstanceOf(GraphQLError)
    expect(error.extensions['code']).toBe('GRAPHQL_PARSE_FAILED')
    expect(error.locations).toEqual([{ line: 1, column: 10 }])
  })

  test('more tokens than maxTokens is TOKEN_LIMIT_EXCEEDED with the limit', () => {
    const error = parseDocument('{ a b c d e }', { maxTokens: 4 }) as GraphQLError
    expect(error.extensions).toEqual({ code: 'TOKEN_LIMIT_EXCEEDED', limit: 4 })
    expect(error.message).toBe('The document has more than 4 tokens.')
    expect(parseDocument('{ a b }', { maxTokens: 4 })).not.toBeInstanceOf(GraphQLError)
  })

  test('a source that is not a string is GRAPHQL_PARSE_FAILED, not a TypeError', () => {
    const error = parseDocument(42 as unknown as string) as GraphQLError
    expect(error.extensions['code']).toBe('GRAPHQL_PARSE_FAILED')
  })

  test('the default token limit is 10,000', () => {
    const fields = Array.from({ length: 9_997 }, () => 'a').join(' ')
    expect(parseDocument(`{ ${fields} }`)).not.toBeInstanceOf(GraphQLError)
    const error = parseDocument(`{ ${fields} a a }`) as GraphQLError
    expect(error.extensions).toEqual({
      code: 'TOKEN_LIMIT_EXCEEDED',
      limit: DEFAULT_GUARD_OPTIONS.maxTokens,
    })
  })

  test('nesting deeper than the parser can recurse is GRAPHQL_PARSE_FAILED, not a thrown RangeError', () => {
    const error = parseDocument(`{${'a{'.repeat(20_000)}b${'}'.repeat(20_001)}`, {
      maxTokens: 100_000,
    })
    expect((error as GraphQLError).extensions['code']).toBe('GRAPHQL_PARSE_FAILED')
  })
})

describe('analyzeDocument: static measures', () => {
  test('depth: a leaf counts 1, a field with a selection 1 + its deepest child', () => {
    expect(measure('{ answer }').depth).toBe(1)
    expect(measure('{ order(id: 1) { id customer { name } } }').depth).toBe(3)
  })

  test('depth: inline fragments and fragment spreads add nothing', () => {
    expect(
      measure(
        '{ order(id: 1) { ... on Order { ...C } } } fragment C on Order { customer { name } }',
      ).depth,
    ).toBe(3)
  })

  test('aliases: every aliased field, __typename included, fragments with multiplicity', () => {
    expect(measure('{ a: answer b: answer t: __typename answer }').aliases).toBe(3)
    expect(measure('{ ...F ...F ...F } fragment F on Query { x: answer }').aliases).toBe(3)
  })

  test('directives: operation, variable definition, field, spread, inline fragment and fragment definition', () => {
    const source = `query Q($a: Boolean = true @deprecated) @live {
      answer @include(if: $a) @skip(if: false)
      ...F @include(if: true)
      ... on Query @skip(if: false) { answer }
    }
    fragment F on Query @foo { tags @bar }`
    // op 1 + variable 1 + field 2 + spread 1 + inline 1 + fragment definition 1 + inside fragment 1
    expect(measure(source).directives).toBe(8)
  })

  test('nodes: field selections with fragments expanded, each spread counting', () => {
    expect(measure('{ order(id: 1) { id total } answer }').nodes).toBe(4)
    expect(
      measure('{ order(id: 1) { ...F ...F } } fragment F on Order { id __typename }').nodes,
    ).toBe(5)
  })

  test('repeats: selections sharing a response name in one merged set, fragments with multiplicity', () => {
    expect(measure('{ answer }').repeats).toBe(1)
    expect(measure('{ answer a: tags answer answer }').repeats).toBe(3)
    // Aliases are response names: `a: answer` is not `answer`, `tags` aliased `answer` is.
    expect(measure('{ answer a: answer answer: tags }').repeats).toBe(2)
    // Inline fragments merge into their parent set; a child set is a set of its own.
    expect(
      measure('{ answer ... on Query { answer ... { answer } } order(id: 1) { id id } }').repeats,
    ).toBe(3)
    // A fragment contributes its top-level names once per spread, nested spreads included.
    expect(
      measure(
        '{ answer ...F ...F ... on Query { ...G } } fragment F on Query { answer ...G } fragment G on Query { answer }',
      ).repeats,
    ).toBe(6)
    // Fields sharing a response name merge their sub-selections (GraphQL spec §5.3.2): the two
    // `customer`s of F spread twice make one set of four `name`s.
    expect(
      measure('{ order(id: 1) { ...F ...F } } fragment F on Order { id customer { name name } }')
        .repeats,
    ).toBe(4)
    expect(
      measure('{ order(id: 1) { id } order(id: 1) { id } o: order(id: 1) { id } }').repeats,
    ).toBe(2)
    // Across parents: 6 × `order` each with 6 × `id` is one set of 36 `id`s for graphql-js.
    const square = `{${` order(id: 1) {${' id'.repeat(6)} }`.repeat(6)} }`
    expect(measure(square).repeats).toBe(36)
    expect(
      measure(
        `{ ...F ...F } fragment F on Query {${' order(id: 1) { ...G }'.repeat(3)} } fragment G on Order { id id }`,
      ).repeats,
    ).toBe(12)
  })

  test('repeats: the limit, with the response name and the count', () => {
    const { document, operation } = operationOf(
      `{ ...F ...F } fragment F on Query {${' order(id: 1) { id }'.repeat(16)} }`,
    )
    const analysis = analyzeDocument(schema, document)
    expect(analysis.operation(operation).errors.map((e) => e.extensions)).toEqual([
      { code: 'FIELD_REPEAT_LIMIT_EXCEEDED', limit: 30, actual: 32, field: 'order' },
    ])
    const within = analyzeDocument(schema, document, { maxFieldRepeats: 32 })
    expect(within.operation(operation).errors).toEqual([])
    expect(DEFAULT_GUARD_OPTIONS.maxFieldRepeats).toBe(30)
  })

  test('repeats: fragments memoised by one operation serve the next with their full names', () => {
    const { document } = operationOf(
      `query A { ...F } query B { ...F ...F } fragment F on Query { answer answer }`,
    )
    const analysis = analyzeDocument(schema, document)
    const [a, b] = document.definitions as OperationDefinitionNode[]
    expect(analysis.operation(a as OperationDefinitionNode).repeats).toBe(2)
    expect(analysis.operation(b as OperationDefinitionNode).repeats).toBe(4)
  })

  test('repeats: past maxNodes merge steps (one per name per spread) an operation stops counting, and its fragments are not memoised half-counted', () => {
    const { document } = operationOf(
      `query A { ...G ...G ...G ...F } query B { ...F }
      fragment F on Query { ...G ...G ...G } fragment G on Query { answer answer }`,
    )
    // A merges one name per spread: 3 for its own ...G, then F's second and third ...G are past 4.
    const analysis = analyzeDocument(schema, document, { maxNodes: 4, maxFieldRepeats: 5 })
    const [a, b] = document.definitions as OperationDefinitionNode[]
    const first = analysis.operation(a as OperationDefinitionNode)
    expect(first.errors.map((e) => e.extensions['code'])).toContain('NODE_LIMIT_EXCEEDED')
    // B measures F again (3 steps, within 4): its six `answer`s, not the two A had counted.
    const second = analysis.operation(b as OperationDefinitionNode)
    expect(second).toMatchObject({ nodes: 6, repeats: 6 })
    expect(second.errors.map((e) => e.extensions['code'])).toEqual([
      'NODE_LIMIT_EXCEEDED',
      'FIELD_REPEAT_LIMIT_EXCEEDED',
    ])
  })

  test('fragment doubling reports its true astronomic count without expanding', () => {
    let source = '{ ...F50 } fragment F0 on Query { answer }\n'
    for (let i = 1; i <= 50; i++)
      source += `fragment F${i} on Query { ...F${i - 1} ...F${i - 1} a${i}: answer }\n`
    // The aliases are allowed here, so the repeats are counted to the end.
    const measures = measure(source, { maxAliases: Number.POSITIVE_INFINITY })
    expect(measures.nodes).toBe(2 ** 51 - 1)
    expect(measures.aliases).toBe(2 ** 50 - 1)
    expect(measures.repeats).toBe(2 ** 50)
    // Under the default maxAliases (30) the operation is refused for its aliases, and the repeats
    // stop counting once the walk has met more aliases than that (a lower bound, still refused).
    const refused = measure(source)
    expect(refused.aliases).toBe(2 ** 50 - 1)
    expect(refused.repeats).toBeLessThan(2 ** 50)
    expect(refused.errors.map((error) => error.extensions['code'])).toContain(
      'ALIAS_LIMIT_EXCEEDED',
    )
  })

  test('repeats stop counting past maxAliases: the path of each alias is not looked up', () => {
    const aliases = Array.from({ length: 200 }, (_, i) => `a${i}: answer`).join(' ')
    const source = `{ ${aliases} answer answer answer }`
    expect(measure(source, { maxAliases: 1000 }).repeats).toBe(3)
    const refused = measure(source, { maxAliases: 100 })
    expect(refused.aliases).toBe(200)
    expect(refused.repeats).toBe(1)
    expect(refused.errors.map((error) => error.extensions['code'])).toEqual([
      'ALIAS_LIMIT_EXCEEDED',
    ])
  })

  test('a fragment cycle counts the fragments on the cycle once each, and terminates', () => {
    const measures = measure(
      '{ ...A } fragment A on Query { answer ...B } fragment B on Query { tags ...A }',
    )
    expect(measures.nodes).toBe(2)
  })

  test('unknown fragments, fields and types count as written, without failing', () => {
    const measures = measure(
      '{ nope { deeper } ...Missing ... on Nope { x } } fragment Bad on Nope { y }',
    )
    expect(measures).toMatchObject({ depth: 2, nodes: 3, errors: [] })
  })

  test('each limit over its maximum gives one coded error with limit and actual', () => {
    const { errors } = measure('{ a: answer b: answer order(id: 1) @skip(if: false) { id } }', {
      maxDepth: 1,
      maxAliases: 1,
      maxDirectives: 0,
      maxNodes: 3,
    })
    expect(errors.map((error) => [error.message, error.extensions])).toEqual([
      [
        'Query depth 2 exceeds the maximum of 1.',
        { code: 'DEPTH_LIMIT_EXCEEDED', limit: 1, actual: 2 },
      ],
      [
        'Alias count 2 exceeds the maximum of 1.',
        { code: 'ALIAS_LIMIT_EXCEEDED', limit: 1, actual: 2 },
      ],
      [
        'Directive count 1 exceeds the maximum of 0.',
        { code: 'DIRECTIVE_LIMIT_EXCEEDED', limit: 0, actual: 1 },
      ],
      [
        'Node count 4 exceeds the maximum of 3.',
        { code: 'NODE_LIMIT_EXCEEDED', limit: 3, actual: 4 },
      ],
    ])
  })

  test('a value at the limit passes', () => {
    expect(measure('{ a: answer }', { maxAliases: 1, maxDepth: 1, maxNodes: 1 }).errors).toEqual([])
  })

  test('the operation measures are memoised per operation node', () => {
    const { document, operation } = operationOf('{ answer }')
    const analysis = analyzeDocument(schema, document)
    expect(analysis.operation(operation)).toBe(analysis.operation(operation))
  })

  test('each operation of a document is measured on its own, fragments shared', () => {
    const { document } = operationOf(
      'query A { ...F } query B { ...F ...F x: answer } fragment F on Query { answer }',
    )
    const analysis = analyzeDocument(schema, document)
    const [a, b] = document.definitions as unknown as [never, never]
    expect(analysis.operation(a).nodes).toBe(1)
    expect(analysis.operation(b)).toMatchObject({ nodes: 3, aliases: 1 })
  })

  test('MUST: the standard introspection query of graphql-js 17 passes the default limits (depth 15)', () => {
    const measures = measure(
      getIntrospectionQuery17({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      }),
    )
    expect(measures).toMatchObject({ depth: 15, errors: [] })
  })

  test('MUST: the standard introspection query passes the default limits (depth 15)', () => {
    for (const options of [
      undefined,
      {
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
      },
    ]) {
      const measures = measure(getIntrospectionQuery(options))
      expect(measures.errors).toEqual([])
      expect(measures.depth).toBe(15)
    }
  })
})
