/**
 * The guard pass: one walk per operation for the static measures (depth, aliases, directives,
 * nodes), each fragment once, and the cost per request's variables, all cached with the
 * document so that a document parsed and validated once is only costed again.
 *
 * @module
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
} from 'graphql'
import type { GraphQLErrorCode } from '../error.ts'
import { codedError } from '../error.ts'
import { type CostSettings, operationCost } from './cost.ts'
import { DEFAULT_GUARD_OPTIONS } from './defaults.ts'
import { type FragmentMeasures, type Measures, measureOperation } from './measure.ts'
import type { CostResult, DocumentAnalysis, GuardOptions, OperationAnalysis } from './options.ts'

/**
 * Analyses a parsed document against a schema: `operation(op)` gives the static measures of an
 * operation with one coded error per limit exceeded (`DEPTH_LIMIT_EXCEEDED`,
 * `ALIAS_LIMIT_EXCEEDED`, `DIRECTIVE_LIMIT_EXCEEDED`, `NODE_LIMIT_EXCEEDED`, `FIELD_REPEAT_LIMIT_EXCEEDED`), computed before
 * validation in time linear in the document; `cost(op, variables)` the requested cost of a
 * validated operation under one request's coerced variables. Neither ever throws. Keep the
 * analysis with the cached document: the measures and the fragment table are computed once.
 *
 * Depth: a leaf field counts 1, a field with a selection set 1 more than its deepest child;
 * fragments add nothing; introspection fields count like any other. Aliases: every aliased
 * field, `__typename` included. Directives: every use, in the operation and the fragments it
 * spreads. Nodes: field selections with fragments expanded. Counts are with multiplicity (a
 * fragment spread three times counts three times), as floats, so fragment doubling reports its
 * true total without being expanded. Repeats: the most selections sharing one response path
 * (fragments and the sets of same-named fields merged, with multiplicity), which graphql-js
 * validation compares pairwise (measure.ts).
 *
 * @param schema The schema the document is run against.
 * @param document A parsed document ({@link parseDocument}).
 * @param options Limits and cost options; defaults in {@link DEFAULT_GUARD_OPTIONS}.
 * @returns The analysis of the document.
 *
 * @example
 * ```ts
 * const document = parse('query { orders(first: 10) { edges { node { id } } } }')
 * const analysis = analyzeDocument(schema, document, { maxDepth: 12 })
 * const operation = document.definitions[0] as OperationDefinitionNode
 * const { depth, errors } = analysis.operation(operation)
 * const { cost } = analysis.cost(operation, {})
 * ```
 */
export function analyzeDocument(
  schema: GraphQLSchema,
  document: DocumentNode,
  options?: GuardOptions,
): DocumentAnalysis {
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) {
      fragments.set(definition.name.value, definition)
    }
  }
  const limits = {
    maxDepth: options?.maxDepth ?? DEFAULT_GUARD_OPTIONS.maxDepth,
    maxAliases: options?.maxAliases ?? DEFAULT_GUARD_OPTIONS.maxAliases,
    maxDirectives: options?.maxDirectives ?? DEFAULT_GUARD_OPTIONS.maxDirectives,
    maxNodes: options?.maxNodes ?? DEFAULT_GUARD_OPTIONS.maxNodes,
    maxFieldRepeats: options?.maxFieldRepeats ?? DEFAULT_GUARD_OPTIONS.maxFieldRepeats,
  }
  const settings: CostSettings = {
    maxCost: options?.maxCost ?? DEFAULT_GUARD_OPTIONS.maxCost,
    defaultListSize: options?.defaultListSize ?? DEFAULT_GUARD_OPTIONS.defaultListSize,
    maxPageSize: options?.maxPageSize ?? DEFAULT_GUARD_OPTIONS.maxPageSize,
    mutationCost: options?.mutationCost ?? DEFAULT_GUARD_OPTIONS.mutationCost,
    relayConnections: options?.relayConnections ?? DEFAULT_GUARD_OPTIONS.relayConnections,
    estimators: options?.estimators,
  }
  const fragmentMemo = new Map<string, FragmentMeasures>()
  const operations = new Map<OperationDefinitionNode, OperationAnalysis>()
  const costs = new Map<OperationDefinitionNode, CostResult>()
  return {
    document,
    operation(operation: OperationDefinitionNode): OperationAnalysis {
      let analysis = operations.get(operation)
      if (analysis === undefined) {
        analysis = check(
          measureOperation(operation, fragments, fragmentMemo, limits.maxNodes, limits.maxAliases),
          limits,
        )
        operations.set(operation, analysis)
      }
      return analysis
    },
    cost(
      operation: OperationDefinitionNode,
      variableValues: Readonly<Record<string, unknown>>,
      context?: unknown,
    ): CostResult {
      // Without variables or estimators (which see the context) the cost is the same every time.
      const constant =
        (settings.estimators?.length ?? 0) === 0 &&
        (operation.variableDefinitions?.length ?? 0) === 0
      let result = constant ? costs.get(operation) : undefined
      if (result === undefined) {
        result = operationCost(schema, fragments, operation, variableValues, context, settings)
        if (constant) costs.set(operation, result)
      }
      return result
    },
  }
}

function check(
  measures: Measures,
  limits: {
    maxDepth: number
    maxAliases: number
    maxDirectives: number
    maxNodes: number
    maxFieldRepeats: number
  },
): OperationAnalysis {
  const errors: GraphQLError[] = []
  const over = (code: GraphQLErrorCode, what: string, actual: number, limit: number): void => {
    if (actual > limit) {
      errors.push(
        codedError(code, `${what} ${actual} exceeds the maximum of ${limit}.`, { limit, actual }),
      )
    }
  }
  over('DEPTH_LIMIT_EXCEEDED', 'Query depth', measures.depth, limits.maxDepth)
  over('ALIAS_LIMIT_EXCEEDED', 'Alias count', measures.aliases, limits.maxAliases)
  over('DIRECTIVE_LIMIT_EXCEEDED', 'Directive count', measures.directives, limits.maxDirectives)
  over('NODE_LIMIT_EXCEEDED', 'Node count', measures.nodes, limits.maxNodes)
  if (measures.repeats > limits.maxFieldRepeats) {
    const { repeats: actual, repeated: field } = measures
    const limit = limits.maxFieldRepeats
    errors.push(
      codedError(
        'FIELD_REPEAT_LIMIT_EXCEEDED',
        `The response name "${field}" is selected ${actual} times in one merged selection set, over the maximum of ${limit}.`,
        { limit, actual, field },
      ),
    )
  }
  const { depth, aliases, directives, nodes, repeats } = measures
  return { depth, aliases, directives, nodes, repeats, errors }
}
