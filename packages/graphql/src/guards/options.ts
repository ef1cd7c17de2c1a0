/**
 * The contract of the guard pass: its limits, its cost model, and what it reports. See
 * analyze.ts for the pass itself.
 *
 * @module
 */
import type { DocumentNode, GraphQLError, OperationDefinitionNode } from 'graphql'
import type { ComplexityEstimator } from 'graphql-query-complexity'
import type { ListSizeExtension } from './directives.ts'

/**
 * The limits the guard pass enforces; each has a default chosen so that real applications and
 * the standard introspection query (graphql-js `getIntrospectionQuery()`) pass.
 *
 * @example
 * ```ts
 * const limits: GuardLimits = { maxDepth: 12, maxCost: 5000 }
 * ```
 */
export interface GuardLimits {
  /** Deepest field nesting, a leaf field counting 1 (default 20; the introspection query is 15 deep). */
  readonly maxDepth?: number
  /** Aliased fields, `__typename` included (default 30). */
  readonly maxAliases?: number
  /** Directive uses in the operation and the fragments it spreads (default 50). */
  readonly maxDirectives?: number
  /** Lexical tokens of the document, enforced by the parser (default 10,000). */
  readonly maxTokens?: number
  /** Field selections with fragments expanded, each spread counted every time (default 10,000). */
  readonly maxNodes?: number
  /** Requested cost of one operation (default 1,000). */
  readonly maxCost?: number
  /**
   * Selections sharing one response path: one selection set with its inline fragments and the
   * fragments it spreads merged in, and with the sets of the other fields of the same response
   * name (`{ a { x } a { x } }` selects `a.x` twice), each spread counted every time (default
   * 30). graphql-js validation (OverlappingFieldsCanBeMerged, GraphQL spec §5.3.2) compares such
   * selections pairwise, and their sub-selections again at every level, so its time grows with
   * the square of this number times the depth: `{ order { id } }` repeated 1,200 times passes every other
   * limit and takes graphql-js 0.6 s (graphql 16) to 2 s (graphql 17) to validate. At 30, the
   * worst document within the other defaults (a 20-deep chain repeated 30 times) validates in
   * about 5 ms on graphql 16 and 17 (40: 20 ms; 100: 0.1 to 0.16 s). Colocated fragments repeat
   * `id` or `__typename` a few dozen times at most: raise it with `maxDepth` lowered if yours do more.
   */
  readonly maxFieldRepeats?: number
}

/**
 * The cost model (IBM GraphQL Cost Directives, with the defaults of that specification):
 * scalars and enums cost 0, composite types 1, a field's `@cost(weight:)` or its
 * `extensions.cost` replaces that; a list multiplies its children by its size, taken from its
 * slicing arguments (`@listSize(slicingArguments:)`, or `first`/`last` on a Relay connection)
 * with the coerced variable values, else `@listSize(assumedSize:)`, else `defaultListSize`.
 * Code-first schemas put the same settings in `extensions.cost` and `extensions.listSize`
 * ({@link ListSizeExtension}). cost.ts says where the model differs from graphql-query-complexity.
 *
 * @example
 * ```ts
 * const cost: CostOptions = { defaultListSize: 10, maxPageSize: 100, mutationCost: 10 }
 * ```
 */
export interface CostOptions {
  /** Size assumed for a list with no slicing argument and no `assumedSize` (default 10). */
  readonly defaultListSize?: number
  /** Largest value a slicing argument may take; above it the operation is refused with `PAGE_SIZE_EXCEEDED` (default 100). */
  readonly maxPageSize?: number
  /** Base cost of a mutation operation, as Apollo and Shopify charge (default 10). */
  readonly mutationCost?: number
  /**
   * Treat a field whose type is named `…Connection` with `first`/`last` arguments as
   * `@listSize(slicingArguments: ["first", "last"], sizedFields: ["edges", "nodes"])` when it has
   * no `@listSize` of its own (default true).
   */
  readonly relayConnections?: boolean
  /**
   * graphql-query-complexity estimators, tried in order before the cost directives; the first
   * that answers a number gives the field's cost (its `childComplexity` is ours), so existing
   * estimators keep working.
   */
  readonly estimators?: readonly ComplexityEstimator[]
}

/**
 * Everything the guard pass is configured with.
 *
 * @example
 * ```ts
 * const options: GuardOptions = { maxDepth: 12, maxCost: 5000, defaultListSize: 10 }
 * ```
 */
export interface GuardOptions extends GuardLimits, CostOptions {}

/**
 * What the static part of the pass measured for one operation (fragments it spreads
 * included): computed once per document and cached with it.
 *
 * @example
 * ```ts
 * const { depth, errors } = analysis.operation(operation)
 * ```
 */
export interface OperationAnalysis {
  readonly depth: number
  readonly aliases: number
  readonly directives: number
  readonly nodes: number
  /** The most selections sharing one response path (see `maxFieldRepeats`). */
  readonly repeats: number
  /** One coded error per limit exceeded (`DEPTH_LIMIT_EXCEEDED`, …), empty when it passes. */
  readonly errors: readonly GraphQLError[]
}

/**
 * The requested cost of one operation under one request's variables.
 *
 * @example
 * ```ts
 * const { cost, errors } = analysis.cost(operation, variableValues)
 * ```
 */
export interface CostResult {
  /** The requested cost (IBM "static" cost: an upper bound computed before execution). */
  readonly cost: number
  /**
   * `COST_LIMIT_EXCEEDED`, `SLICING_ARGUMENT_REQUIRED`, `PAGE_SIZE_EXCEEDED`, or `BAD_USER_INPUT`
   * (`field`, `argument`, `actual`) for a negative or fractional slicing argument; empty when it passes.
   */
  readonly errors: readonly GraphQLError[]
}

/**
 * The guard pass over one parsed document; never throws, whatever the document (fragment
 * cycles, unknown fields and types included: validation reports those).
 *
 * @example
 * ```ts
 * const analysis = analyzeDocument(schema, document, { maxDepth: 12 })
 * ```
 */
export interface DocumentAnalysis {
  readonly document: DocumentNode
  /** The static measures of `operation` (memoised). */
  operation(operation: OperationDefinitionNode): OperationAnalysis
  /**
   * The requested cost of `operation` with `variableValues` (already coerced by graphql-js
   * `getVariableValues`). Call it only on a document that passed validation.
   */
  cost(
    operation: OperationDefinitionNode,
    variableValues: Readonly<Record<string, unknown>>,
    context?: unknown,
  ): CostResult
}
