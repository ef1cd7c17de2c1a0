/**
 * The requested cost of one operation under one request's variables: the "static" method of
 * the IBM GraphQL Cost Directives (an upper bound before execution), evaluated per request on
 * a document parsed and validated once.
 *
 * The model, and where it deliberately differs from graphql-query-complexity 2.0.0 (gqc):
 * - field cost = weight + size × children (IBM cost spec, "Calculating static cost"), floored at 0;
 *   the weight is `@cost(weight:)` on the field, else `extensions.cost`, else `@cost` on its
 *   return type, else 0 for scalars and enums and 1 for composite types; plus the `@cost` (or
 *   `extensions.cost`) of each argument sent. `@cost` on input fields is not counted.
 * - a selection set on an abstract type costs the maximum over its possible types, each field
 *   looked up on the concrete type (so an implementation's `@cost` counts: IBM puts no `@cost`
 *   on interface fields), and only the type conditions that apply to that type counted (GraphQL
 *   spec §6.3.2 DoesFragmentTypeApply). gqc looks fields up on the abstract type and adds a
 *   fragment on an abstract type (or an inline fragment without a type condition there) as one
 *   number, its maximum over all of that type's possible types, to each of them:
 *   `{ u { ... on A { a } ...F } } fragment F on Node { ... on B { b } }` is 3 for gqc (A's
 *   branch gets B's `b`), 2 for us; and a fragment on an interface overlapping a
 *   union counts implementations that can never occur there. Where no fragment narrows at its own
 *   level, the two agree (test/differential.test.ts checks it on generated documents).
 * - size (IBM `@listSize`): a list field, or a field with `@listSize` (or `extensions.listSize`,
 *   or a Relay connection: a `…Connection` type with `first`/`last`), multiplies its children by
 *   the largest slicing argument sent or defaulted in the schema (coerced variables included),
 *   else `assumedSize`, else `defaultListSize`; with `sizedFields` only those children are
 *   multiplied, and a sized child that is a list is not multiplied again by its own size (its
 *   checks still run). None, or several sent, with `requireOneSlicingArgument` is
 *   `SLICING_ARGUMENT_REQUIRED`; a value over `maxPageSize` is `PAGE_SIZE_EXCEEDED`; a negative
 *   or fractional one is `BAD_USER_INPUT` (`field`, `argument`, `actual`) (each once per field).
 *   A list of lists multiplies once per list wrapper: the outer by the size above, each inner
 *   one by `assumedSize`, else `defaultListSize` (`[[Order]]` with no arguments: 10 × 10). A list of scalars costs its weight once. gqc
 *   has no lists: it multiplies only where an estimator does (as test/differential.test.ts's do).
 * - duplicate fields count every time (no field merging), as gqc: an upper bound.
 * - `@skip`/`@include` (GraphQL spec §3.13) are honoured with the variables, as gqc.
 * - fragments are costed once per concrete type and memoised, so fragment doubling is linear; gqc
 *   re-walks each spread and throws past `maxQueryNodes`. A fragment cycle counts 0 (gqc: the
 *   same, since 1.1.1); validation rejects it anyway.
 * - introspection meta fields (`__schema`, `__type`, `__typename`) and the fields of `__*` types
 *   cost 0 and are not given to estimators: they are answered from the schema in memory. gqc
 *   costs them like other fields. Nested introspection lists (`fields { type { fields … } } }`)
 *   multiply the answer: graphql-js >= 16.9 refuses them in validation (MaxIntrospectionDepthRule,
 *   part of `specifiedRules`); depth and nodes bound them here.
 * - only the operation asked for is costed; gqc without `operationName` sums every operation.
 * - estimators (gqc's interface) are asked first, in order, for every other field, with
 *   `childComplexity` our children's cost (unmultiplied) and `type` the concrete parent type.
 *
 * @module
 */
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLError,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql'
import type { ComplexityEstimator } from 'graphql-query-complexity'
import { codedError } from '../error.ts'
import { type FieldCost, fieldCost } from './directives.ts'
import type { CostResult } from './options.ts'
import { argumentValue, argumentValues, included, sent, type Variables } from './values.ts'

/** The resolved cost options. @internal */
export interface CostSettings {
  readonly maxCost: number
  readonly defaultListSize: number
  readonly maxPageSize: number
  readonly mutationCost: number
  readonly relayConnections: boolean
  readonly estimators: readonly ComplexityEstimator[] | undefined
}

/** Which fields of a sized selection set to count: those named in `names` (`sized`) or the others. */
interface Part {
  readonly names: readonly string[]
  readonly sized: boolean
}

/** Computes the cost of `operation` (see the module documentation). @internal */
export function operationCost(
  schema: GraphQLSchema,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  operation: OperationDefinitionNode,
  variables: Variables,
  context: unknown,
  settings: CostSettings,
): CostResult {
  const run = new CostRun(schema, fragments, variables, context, settings)
  let cost: number
  try {
    const root =
      operation.operation === 'query'
        ? schema.getQueryType()
        : operation.operation === 'mutation'
          ? schema.getMutationType()
          : schema.getSubscriptionType()
    const base = operation.operation === 'mutation' ? settings.mutationCost : 0
    cost = base + (root ? run.selectionSet(operation.selectionSet, root) : 0)
  } catch (error) {
    // Only a user estimator that throws, or a document nested deeper than the stack (possible
    // only with limits far above the defaults), gets here: refuse rather than throw.
    const deep = error instanceof RangeError
    return {
      cost: Number.POSITIVE_INFINITY,
      errors: [
        deep
          ? codedError(
              'COST_LIMIT_EXCEEDED',
              'The operation nests too deeply to compute its cost.',
              {
                limit: settings.maxCost,
                actual: null,
              },
            )
          : codedError('INTERNAL_SERVER_ERROR', 'The cost of the operation could not be computed.'),
      ],
    }
  }
  const errors = run.errors
  // Past 2^1024 (fragment doubling 1,024 levels deep fits in 10,000 tokens) the sums overflow to
  // Infinity, and a page of 0 times Infinity is NaN: never let that compare below the limit.
  if (Number.isNaN(cost)) cost = Number.POSITIVE_INFINITY
  if (cost > settings.maxCost) {
    errors.push(
      codedError(
        'COST_LIMIT_EXCEEDED',
        `Query cost ${cost} exceeds the maximum of ${settings.maxCost}.`,
        {
          limit: settings.maxCost,
          actual: cost,
        },
      ),
    )
  }
  return { cost, errors }
}

class CostRun {
  readonly errors: GraphQLError[] = []
  private readonly reported = new Set<string>()
  private memo: Map<unknown, Map<unknown, number>> | undefined
  private readonly active = new Set<FragmentDefinitionNode>()
  private readonly schema: GraphQLSchema
  private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>
  private readonly variables: Variables
  private readonly context: unknown
  private readonly settings: CostSettings

  constructor(
    schema: GraphQLSchema,
    fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    variables: Variables,
    context: unknown,
    settings: CostSettings,
  ) {
    this.schema = schema
    this.fragments = fragments
    this.variables = variables
    this.context = context
    this.settings = settings
  }

  /** A selection set on `type`: the maximum over the possible types of an abstract type (memoised). */
  selectionSet(node: SelectionSetNode, type: GraphQLCompositeType): number {
    if (isObjectType(type)) return this.selections(node.selections, type, undefined)
    const cached = this.cached(node, type)
    if (cached !== undefined) return cached
    let max = 0
    for (const possible of this.schema.getPossibleTypes(type)) {
      const cost = this.selections(node.selections, possible, undefined)
      if (cost > max) max = cost
    }
    this.store(node, type, max)
    return max
  }

  /** The selections that apply to the object type `type` (only those of `part` when given). */
  private selections(
    selections: readonly SelectionNode[],
    type: GraphQLObjectType,
    part: Part | undefined,
  ): number {
    let total = 0
    for (const selection of selections) {
      if (!included(selection, this.variables)) continue
      if (selection.kind === Kind.FIELD) {
        if (part !== undefined && part.names.includes(selection.name.value) !== part.sized) continue
        total += this.field(selection, type, part?.sized === true)
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition
        if (condition === undefined || this.applies(condition.name.value, type)) {
          total += this.selections(selection.selectionSet.selections, type, part)
        }
      } else {
        const fragment = this.fragments.get(selection.name.value)
        if (fragment === undefined || this.active.has(fragment)) continue
        if (!this.applies(fragment.typeCondition.name.value, type)) continue
        const key =
          part === undefined ? type : `${type.name}\u0000${part.sized}\u0000${part.names.join(',')}`
        let cost = this.cached(fragment, key)
        if (cost === undefined) {
          this.active.add(fragment)
          cost = this.selections(fragment.selectionSet.selections, type, part)
          this.active.delete(fragment)
          this.store(fragment, key, cost)
        }
        total += cost
      }
    }
    return total
  }

  // GraphQL spec §6.3.2 DoesFragmentTypeApply.
  private applies(condition: string, type: GraphQLObjectType): boolean {
    if (condition === type.name) return true
    const conditionType = this.schema.getType(condition)
    return (
      conditionType !== undefined &&
      isAbstractType(conditionType) &&
      this.schema.isSubType(conditionType, type)
    )
  }

  /** One field of the object type `parent`; `sizedByParent`: a list already multiplied by its parent's size. */
  private field(node: FieldNode, parent: GraphQLObjectType, sizedByParent: boolean): number {
    const name = node.name.value
    if (name.startsWith('__')) return 0 // __typename, __schema, __type: answered from the schema
    const field = parent.getFields()[name]
    if (field === undefined) return 0 // unknown: validation reports it
    const settings = fieldCost(field, parent.name, this.settings.relayConnections)
    if (settings.introspection) return 0
    const type = getNamedType(field.type)
    const composite = isCompositeType(type) && node.selectionSet !== undefined
    // Each child selection is costed once, whether an estimator or the directives use it.
    const split = composite && settings.sized && settings.sizedFields !== undefined
    let sized = 0
    let rest = 0
    if (split) {
      sized = this.part(node.selectionSet, type, { names: settings.sizedFields, sized: true })
      rest = this.part(node.selectionSet, type, { names: settings.sizedFields, sized: false })
    } else if (composite) rest = this.selectionSet(node.selectionSet, type)
    const estimated = this.estimate(parent, field, node, sized + rest)
    if (estimated !== undefined) return estimated
    const weight =
      settings.argumentWeights.size > 0
        ? settings.weight + this.argumentsWeight(settings, node)
        : settings.weight
    // Every sized field has its page-size and slicing checks (a list of scalars, a sized child
    // too); a sized child's size is its parent's, a list of scalars costs its weight once.
    const own = settings.sized ? this.size(settings, field, node) : 1
    if (!composite) return Math.max(0, weight)
    const inner = settings.innerLists > 0 ? this.innerSize(settings) : 1
    const size = (sizedByParent ? 1 : own) * inner
    return Math.max(0, split ? weight + size * sized + rest : weight + size * rest)
  }

  /** The first number the estimators give (graphql-query-complexity's interface), if any. */
  private estimate(
    type: GraphQLObjectType,
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
    childComplexity: number,
  ): number | undefined {
    const estimators = this.settings.estimators
    if (estimators === undefined || estimators.length === 0) return undefined
    const args = argumentValues(field, node, this.variables)
    const context = this.context as Record<string, unknown> | undefined
    for (const estimator of estimators) {
      const cost = estimator(
        context === undefined
          ? { type, field, node, args, childComplexity }
          : { type, field, node, args, childComplexity, context },
      )
      if (typeof cost === 'number' && !Number.isNaN(cost)) return cost
    }
    return undefined
  }

  /** The part of a sized field's selection set (IBM `sizedFields`), the maximum over possible types. */
  private part(node: SelectionSetNode, type: GraphQLCompositeType, part: Part): number {
    // Memoised as selectionSet() is: nested connections of an abstract type would otherwise be
    // costed once per possible type at every level, exponentially.
    const key = `${type.name}\u0000${part.sized}\u0000${part.names.join(',')}`
    const cached = this.cached(node, key)
    if (cached !== undefined) return cached
    let max = 0
    if (isObjectType(type)) max = this.selections(node.selections, type, part)
    else {
      for (const possible of this.schema.getPossibleTypes(type)) {
        const cost = this.selections(node.selections, possible, part)
        if (cost > max) max = cost
      }
    }
    this.store(node, key, max)
    return max
  }

  /** The list size of a field (IBM cost spec `@listSize`), with its page-size and slicing checks. */
  private size(
    settings: FieldCost,
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
  ): number {
    let size: number | undefined
    let given = 0
    for (const name of settings.slicingArguments) {
      const value = argumentValue(field, node, name, this.variables)
      if (typeof value !== 'number') continue
      if (sent(node, name, this.variables)) given++
      // A negative page (many resolvers then return everything: `slice(0, -1)`, SQL `LIMIT -1`)
      // or a fraction is refused, not costed as 0.
      if (!Number.isInteger(value) || value < 0) {
        this.report('BAD_USER_INPUT', settings.coordinate, name, () =>
          codedError(
            'BAD_USER_INPUT',
            `${settings.coordinate}(${name}: ${value}) must be a whole number of 0 or more.`,
            { field: settings.coordinate, argument: name, actual: value },
          ),
        )
        if (size === undefined) size = 0 // refused already: not also SLICING_ARGUMENT_REQUIRED
        continue
      }
      if (value > this.settings.maxPageSize) {
        this.report('PAGE_SIZE_EXCEEDED', settings.coordinate, name, () =>
          codedError(
            'PAGE_SIZE_EXCEEDED',
            `${settings.coordinate}(${name}: ${value}) is over the maximum page size of ${this.settings.maxPageSize}.`,
            {
              field: settings.coordinate,
              argument: name,
              limit: this.settings.maxPageSize,
              actual: value,
            },
          ),
        )
      }
      if (size === undefined || value > size) size = value
    }
    // IBM cost spec, @listSize(requireOneSlicingArgument:): none or several slicing arguments
    // may be refused. A schema default counts as one sent, but not toward "several" (a Relay
    // connection with `first: Int = 20` paged backward with `last` is fine).
    const names = settings.slicingArguments
    if (
      settings.requireOneSlicingArgument &&
      names.length > 0 &&
      (size === undefined || given > 1)
    ) {
      const message =
        size === undefined
          ? `${settings.coordinate} needs one of the arguments ${names.join(', ')}.`
          : `${settings.coordinate} takes only one of the arguments ${names.join(', ')}.`
      this.report('SLICING_ARGUMENT_REQUIRED', settings.coordinate, '', () =>
        codedError('SLICING_ARGUMENT_REQUIRED', message, {
          field: settings.coordinate,
          arguments: names,
        }),
      )
    }
    if (size !== undefined) return size
    return settings.assumedSize ?? this.settings.defaultListSize
  }

  /** The size of the lists nested in a list (`[[T]]`): `assumedSize`, else `defaultListSize`, per level. */
  private innerSize(settings: FieldCost): number {
    return (settings.assumedSize ?? this.settings.defaultListSize) ** settings.innerLists
  }

  /** The weights of the arguments sent (IBM cost spec: `@cost` on ARGUMENT_DEFINITION). */
  private argumentsWeight(settings: FieldCost, node: FieldNode): number {
    let total = 0
    for (const arg of node.arguments ?? []) {
      const weight = settings.argumentWeights.get(arg.name.value)
      if (weight !== undefined && sent(node, arg.name.value, this.variables)) total += weight
    }
    return total
  }

  /** One error per code and field, however often the field occurs. */
  private report(
    code: string,
    coordinate: string,
    argument: string,
    error: () => GraphQLError,
  ): void {
    const key = `${code} ${coordinate} ${argument}`
    if (this.reported.has(key)) return
    this.reported.add(key)
    this.errors.push(error())
  }

  private cached(node: unknown, key: unknown): number | undefined {
    return this.memo?.get(node)?.get(key)
  }

  private store(node: unknown, key: unknown, cost: number): void {
    this.memo ??= new Map()
    let byKey = this.memo.get(node)
    if (byKey === undefined) {
      byKey = new Map()
      this.memo.set(node, byKey)
    }
    byKey.set(key, cost)
  }
}
