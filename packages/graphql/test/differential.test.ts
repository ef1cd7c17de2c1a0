// Differential property test: our cost against graphql-query-complexity's getComplexity (the
// oracle) on generated schemas and valid documents, where both models agree by construction:
// gqc's field-extension estimators mirror our weights and list sizes (config A), or both run the
// same gqc estimators (config B). The documents exercise nested lists with `first` from
// variables and literals, named and inline fragments (spread several times), interfaces and
// unions, aliases, duplicate fields and @skip/@include with variables.
//
// Excluded on purpose (our model differs, see src/guards/cost.ts): a fragment on an abstract
// type, or an inline fragment without a type condition, that narrows to a concrete type at its own level (gqc adds the fragment's maximum over
// all types to every possible type), and meta fields with gqc's simpleEstimator (ours cost 0).
import fc from 'fast-check'
import {
  buildSchema,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLUnionType,
  getVariableValues,
  Kind,
  type OperationDefinitionNode,
  parse,
  specifiedRules,
  validate,
  versionInfo,
} from 'graphql'
import {
  type ComplexityEstimator,
  fieldExtensionsEstimator,
  getComplexity,
  simpleEstimator,
} from 'graphql-query-complexity'
import { describe, expect, test } from 'vitest'
import { analyzeDocument } from '../src/index.ts'

const DEFAULT_LIST_SIZE = 10

function prng(seed: number): (n: number) => number {
  let state = seed >>> 0
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (((t ^ (t >>> 14)) >>> 0) % n) as number
  }
}

interface Model {
  schema: GraphQLSchema
  objects: GraphQLObjectType[]
  node: GraphQLInterfaceType
  union: GraphQLUnionType
  implementors: GraphQLObjectType[]
}

type Complexity = (args: { args: Record<string, unknown>; childComplexity: number }) => number

/** A field whose `extensions` say the same thing to both models: `cost`/`listSize` to ours, `complexity` to gqc. */
function fieldOf(
  type: GraphQLFieldConfig<unknown, unknown>['type'],
  weight: number,
  kind: 'one' | 'sliced' | 'list',
): GraphQLFieldConfig<unknown, unknown> {
  const complexity: Complexity =
    kind === 'one'
      ? ({ childComplexity }) => weight + childComplexity
      : kind === 'list'
        ? ({ childComplexity }) => weight + DEFAULT_LIST_SIZE * childComplexity
        : ({ args, childComplexity }) =>
            weight +
            (typeof args['first'] === 'number' ? Math.max(0, args['first']) : DEFAULT_LIST_SIZE) *
              childComplexity
  return {
    type,
    ...(kind === 'sliced' ? { args: { first: { type: GraphQLInt } } } : {}),
    extensions: {
      cost: weight,
      complexity,
      ...(kind === 'sliced'
        ? { listSize: { slicingArguments: ['first'], requireOneSlicingArgument: false } }
        : {}),
    },
  }
}

function schemaOf(random: (n: number) => number): Model {
  const count = 2 + random(3)
  const objects: GraphQLObjectType[] = []
  const implementors = new Set<number>()
  for (let i = 0; i < count; i++) if (random(2) === 0) implementors.add(i)
  if (implementors.size === 0) implementors.add(0)
  const idWeight = random(3)
  const peerWeight = random(3)
  const node: GraphQLInterfaceType = new GraphQLInterfaceType({
    name: 'Node',
    fields: () => ({
      id: fieldOf(GraphQLInt, idWeight, 'one'),
      peer: fieldOf(node, peerWeight, 'one'),
    }),
  })
  const fieldsOf = (self: number): GraphQLFieldConfigMap<unknown, unknown> => {
    const fields: GraphQLFieldConfigMap<unknown, unknown> = {}
    fields['s0'] = fieldOf(GraphQLInt, random(4), 'one')
    fields['s1'] = fieldOf(GraphQLInt, random(4), 'one')
    for (let j = 0; j < count; j++) {
      const target = objects[j] as GraphQLObjectType
      if (random(3) > 0) fields[`o${j}`] = fieldOf(target, random(4), 'one')
      if (random(3) > 0) fields[`l${j}`] = fieldOf(new GraphQLList(target), random(4), 'sliced')
      if (random(3) === 0) fields[`p${j}`] = fieldOf(new GraphQLList(target), random(4), 'list')
    }
    if (implementors.has(self)) {
      fields['id'] = fieldOf(GraphQLInt, idWeight, 'one')
      fields['peer'] = fieldOf(node, peerWeight, 'one')
    }
    fields['n'] = fieldOf(node, random(3), 'one')
    fields['u'] = fieldOf(union, random(3), 'one')
    fields['ns'] = fieldOf(new GraphQLList(node), random(3), 'sliced')
    return fields
  }
  for (let i = 0; i < count; i++) {
    objects.push(
      new GraphQLObjectType({
        name: i === 0 ? 'Query' : `T${i}`,
        interfaces: () => (implementors.has(i) ? [node] : []),
        fields: () => fieldsOf(i),
      }),
    )
  }
  const union: GraphQLUnionType = new GraphQLUnionType({
    name: 'U',
    types: () => [...implementors].map((i) => objects[i] as GraphQLObjectType),
  })
  const schema = new GraphQLSchema({ query: objects[0] as GraphQLObjectType, types: objects })
  return {
    schema,
    objects,
    node,
    union,
    implementors: [...implementors].map((i) => objects[i] as GraphQLObjectType),
  }
}

interface Doc {
  source: string
  variables: Record<string, unknown>
}

function documentOf(model: Model, random: (n: number) => number, typename: boolean): Doc {
  const fragments: { name: string; on: string; body: string }[] = []
  const variables: Record<string, unknown> = {}
  const definitions: string[] = []
  const pick = <T>(items: readonly T[]): T => items[random(items.length)] as T
  const directive = (): string => {
    const r = random(8)
    if (r === 0) return ' @skip(if: true)'
    if (r === 1) return ' @include(if: false)'
    if (r === 2 || r === 3) {
      const name = `b${definitions.length}`
      definitions.push(`$${name}: Boolean!`)
      variables[name] = random(2) === 0
      return r === 2 ? ` @skip(if: $${name})` : ` @include(if: $${name})`
    }
    return ''
  }
  const first = (): string => {
    const r = random(4)
    if (r === 0) return ''
    if (r === 1) return `(first: ${random(30)})`
    const name = `n${definitions.length}`
    definitions.push(`$${name}: Int`)
    if (r === 2) variables[name] = random(30)
    return `(first: $${name})`
  }
  const alias = (): string => (random(4) === 0 ? `a${random(1000)}: ` : '')

  // narrow: whether inline fragments on concrete types may appear at this level.
  const selections = (
    type: GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType,
    depth: number,
    narrow: boolean,
  ): string => {
    const items: string[] = []
    const count = 1 + random(3)
    for (let k = 0; k < count; k++) items.push(selection(type, depth, narrow))
    return `{ ${items.join(' ')} }`
  }
  const selection = (
    type: GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType,
    depth: number,
    narrow: boolean,
  ): string => {
    const r = random(10)
    if (r === 0 && typename) return `${alias()}__typename${directive()}`
    // gqc costs an inline fragment without a type condition on an abstract type as one number
    // too (see the header), so it never narrows at its own level either.
    if (r === 1 && depth > 0) return `...${directive()} ${selections(type, depth, false)}`
    if (r === 2 && depth > 0) return spread(type, depth, narrow)
    if (r === 3 && depth > 0 && type instanceof GraphQLObjectType === false && narrow) {
      const on = pick(model.implementors)
      return `... on ${on.name}${directive()} ${selections(on, depth - 1, true)}`
    }
    if (type instanceof GraphQLUnionType) return typename ? '__typename' : `... on Node { id }`
    const fields = Object.values(type.getFields()).filter(
      (f) => depth > 0 || !('getFields' in (f.type as object) || f.type instanceof GraphQLList),
    )
    const field = pick(
      fields.length > 0
        ? fields
        : Object.values(type.getFields()).filter((f) => f.type === GraphQLInt),
    )
    let named = field.type
    if (named instanceof GraphQLList) named = named.ofType
    const args = field.args.length > 0 ? first() : ''
    if (named === GraphQLInt) return `${alias()}${field.name}${args}${directive()}`
    return `${alias()}${field.name}${args}${directive()} ${selections(named as GraphQLObjectType, depth - 1, true)}`
  }
  const spread = (
    type: GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType,
    depth: number,
    narrow: boolean,
  ): string => {
    // Reuse a fragment on the same type (multiplicity) or write a new one.
    const existing = fragments.filter((f) => f.on === type.name)
    if (existing.length > 0 && random(2) === 0) return `...${pick(existing).name}${directive()}`
    const name = `F${fragments.length}`
    const fragment = { name, on: type.name, body: '' }
    fragments.push(fragment)
    // A fragment on an abstract type never narrows at its own level (see the header).
    fragment.body = selections(type, depth - 1, type instanceof GraphQLObjectType)
    void narrow
    return `...${name}${directive()}`
  }
  const body = selections(model.objects[0] as GraphQLObjectType, 3, true)
  const head = definitions.length > 0 ? `query Q(${definitions.join(', ')}) ` : 'query Q '
  const source = [
    head + body,
    ...fragments.map((f) => `fragment ${f.name} on ${f.on} ${f.body}`),
  ].join('\n')
  return { source, variables }
}

function coerced(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  inputs: Record<string, unknown>,
): Record<string, unknown> {
  const result = getVariableValues(schema, operation.variableDefinitions ?? [], inputs) as {
    coerced?: Record<string, unknown>
    variableValues?: { coerced: Record<string, unknown> }
    errors?: unknown
  }
  const values = result.coerced ?? result.variableValues?.coerced
  if (values === undefined) throw new Error(`variables: ${JSON.stringify(result.errors)}`)
  return values
}

function compare(seed: number, config: 'mirrored' | 'estimators'): boolean {
  const random = prng(seed)
  const model = schemaOf(random)
  const { source, variables } = documentOf(model, random, config === 'mirrored')
  const document = parse(source)
  if (validate(model.schema, document, specifiedRules).length > 0) return false
  const operation = document.definitions.find(
    (d) => d.kind === Kind.OPERATION_DEFINITION,
  ) as OperationDefinitionNode
  const estimators: ComplexityEstimator[] =
    config === 'mirrored'
      ? [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 0 })]
      : [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })]
  const expected = getComplexity({ schema: model.schema, query: document, variables, estimators })
  const ours = analyzeDocument(model.schema, document, {
    maxCost: Number.POSITIVE_INFINITY,
    maxPageSize: Number.POSITIVE_INFINITY,
    defaultListSize: DEFAULT_LIST_SIZE,
    ...(config === 'estimators' ? { estimators } : {}),
  }).cost(operation, coerced(model.schema, operation, variables))
  if (ours.cost !== expected || ours.errors.length > 0) {
    throw new Error(
      `seed ${seed}: ours ${ours.cost} (${ours.errors.map((e) => e.message)}), gqc ${expected}\n${source}\n${JSON.stringify(variables)}`,
    )
  }
  return true
}

describe(`differential: our cost = graphql-query-complexity getComplexity (graphql ${versionInfo.major})`, () => {
  for (const config of ['mirrored', 'estimators'] as const) {
    test(`${config}: generated schemas and documents`, () => {
      let valid = 0
      fc.assert(
        fc.property(fc.noShrink(fc.integer()), (seed) => {
          if (compare(seed, config)) valid++
        }),
        { numRuns: 400, interruptAfterTimeLimit: 4_000 },
      )
      // The generator writes valid documents nearly always; a broken one would test nothing.
      expect(valid).toBeGreaterThan(50)
    })
  }

  describe('known differences, on purpose (see src/guards/cost.ts)', () => {
    const schema = buildSchema(`
      type Query { u: U n: Node }
      union U = A | B
      interface Node { id: Int }
      interface Named { name: Int }
      type A implements Node & Named { id: Int a: Int name: Int }
      type B implements Node { id: Int b: Int }
      type C implements Named { name: Int c1: Int c2: Int c3: Int }
    `)
    const both = (source: string) => {
      const document = parse(source)
      expect(validate(schema, document, specifiedRules)).toEqual([])
      const estimators = [simpleEstimator({ defaultComplexity: 1 })]
      const gqc = getComplexity({ schema, query: document, estimators })
      const ours = analyzeDocument(schema, document, { estimators }).cost(
        document.definitions[0] as OperationDefinitionNode,
        {},
      )
      return { gqc, ours: ours.cost }
    }

    test('a fragment on an interface that narrows: gqc adds its maximum to every possible type, we cost each type', () => {
      // A: a (1) + F on A (0); B: F on B (b: 1). gqc: A gets a + max(F) = 2.
      expect(both('{ u { ... on A { a } ...F } } fragment F on Node { ... on B { b } }')).toEqual({
        gqc: 3,
        ours: 2,
      })
    })

    test('an inline fragment without a type condition that narrows: the same', () => {
      expect(both('{ u { ... on A { a } ... { ... on B { b } } } }')).toEqual({ gqc: 3, ours: 2 })
    })

    test('a fragment on an interface overlapping a union: gqc counts types that cannot occur there (C is no U)', () => {
      expect(both('{ u { ...G } } fragment G on Named { ... on C { c1 c2 c3 } }')).toEqual({
        gqc: 4,
        ours: 1,
      })
    })

    test('meta fields: gqc costs __typename like any field, we cost it 0', () => {
      expect(both('{ u { __typename } }')).toEqual({ gqc: 2, ours: 1 })
    })

    test('several operations: gqc without operationName sums them all, we cost the one asked for', () => {
      expect(both('query A { n { id } } query B { u { __typename } }')).toEqual({ gqc: 4, ours: 2 })
    })
  })
})
