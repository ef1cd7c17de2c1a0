/**
 * The IBM GraphQL Cost Directives (https://ibm.github.io/graphql-specs/cost-spec.html, draft
 * 2021: §"@cost" and §"@listSize"), read once per field definition and cached with it.
 *
 * @module
 */
import {
  type ConstDirectiveNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLType,
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isNamedType,
  Kind,
  type ValueNode,
} from 'graphql'

/**
 * The SDL of the `@cost` and `@listSize` directives as the IBM GraphQL Cost Directives
 * specification defines them: add it to a schema written in SDL so that the directives
 * validate, then put them on fields and types.
 *
 * @example
 * ```ts
 * const schema = buildSchema(`${costDirectivesSDL}
 *   type Query { orders(first: Int = 20): [Order!]! @listSize(slicingArguments: ["first"]) }
 *   type Order { id: ID! total: Int! @cost(weight: "2") }`)
 * ```
 */
export const costDirectivesSDL: string = `directive @cost(weight: String!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR

directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
`

/** How one field definition is costed (IBM cost spec), computed once per definition. @internal */
export interface FieldCost {
  /** Own weight: `@cost`, `extensions.cost`, `@cost` of the return type, else 0 (leaf) or 1 (composite). */
  readonly weight: number
  /** Whether the size multiplies the children: a list, or a field with `@listSize` (or a Relay connection). */
  readonly sized: boolean
  /** List wrappers inside the outermost one (`[[T]]`: 1), each multiplying by the assumed or default size. */
  readonly innerLists: number
  readonly slicingArguments: readonly string[]
  readonly assumedSize: number | undefined
  readonly sizedFields: readonly string[] | undefined
  readonly requireOneSlicingArgument: boolean
  /** A field of an introspection type (`__Type.fields`, …): costs 0, answered from the schema in memory. */
  readonly introspection: boolean
  /** `Type.field`, for error messages. */
  readonly coordinate: string
  /** `@cost(weight:)` of its arguments (IBM cost spec: ARGUMENT_DEFINITION), added when sent; empty when none. */
  readonly argumentWeights: ReadonlyMap<string, number>
}

// One cache per value of `relayConnections`, the only option the settings depend on.
const caches = [
  new WeakMap<GraphQLField<unknown, unknown>, FieldCost>(),
  new WeakMap<GraphQLField<unknown, unknown>, FieldCost>(),
] as const

/** The cost settings of `field` of `parent` (cached per field definition). @internal */
export function fieldCost(
  field: GraphQLField<unknown, unknown>,
  parent: string,
  relayConnections: boolean,
): FieldCost {
  const cache = caches[relayConnections ? 1 : 0]
  let known = cache.get(field)
  if (known === undefined) {
    known = readFieldCost(field, parent, relayConnections)
    cache.set(field, known)
  }
  return known
}

function readFieldCost(
  field: GraphQLField<unknown, unknown>,
  parent: string,
  relayConnections: boolean,
): FieldCost {
  const named = getNamedType(field.type)
  const list = isListType(getNullableType(field.type))
  let lists = 0
  for (let type: GraphQLType = field.type; !isNamedType(type); type = type.ofType)
    if (isListType(type)) lists++
  const listSize = directive(field.astNode?.directives, 'listSize')
  const extension = field.extensions['cost']
  const weight =
    numberArgument(directive(field.astNode?.directives, 'cost'), 'weight') ??
    (typeof extension === 'number' ? extension : undefined) ??
    typeWeight(named) ??
    (isCompositeType(named) ? 1 : 0)
  const base = {
    weight,
    introspection: parent.startsWith('__'),
    coordinate: `${parent}.${field.name}`,
    argumentWeights: argumentWeights(field),
    innerLists: Math.max(0, lists - 1),
  }
  if (listSize !== undefined) {
    return {
      ...base,
      sized: true,
      slicingArguments: stringsArgument(listSize, 'slicingArguments') ?? [],
      assumedSize: numberArgument(listSize, 'assumedSize'),
      sizedFields: stringsArgument(listSize, 'sizedFields'),
      requireOneSlicingArgument: booleanArgument(listSize, 'requireOneSlicingArgument') ?? true,
    }
  }
  // Code-first schemas: `extensions: { listSize: { slicingArguments: ['first'], … } }`, the directive's arguments.
  const sizeExtension = field.extensions['listSize']
  if (typeof sizeExtension === 'object' && sizeExtension !== null) {
    const { assumedSize, slicingArguments, sizedFields, requireOneSlicingArgument } =
      sizeExtension as ListSizeExtension
    return {
      ...base,
      sized: true,
      slicingArguments: strings(slicingArguments) ?? [],
      assumedSize: typeof assumedSize === 'number' ? assumedSize : undefined,
      sizedFields: strings(sizedFields),
      requireOneSlicingArgument:
        typeof requireOneSlicingArgument === 'boolean' ? requireOneSlicingArgument : true,
    }
  }
  // A Relay connection (Relay Cursor Connections Specification §2) sized by first/last.
  const slicing = field.args
    .filter((arg) => arg.name === 'first' || arg.name === 'last')
    .map((arg) => arg.name)
  if (relayConnections && named.name.endsWith('Connection') && slicing.length > 0) {
    return {
      ...base,
      sized: true,
      slicingArguments: slicing,
      assumedSize: undefined,
      sizedFields: ['edges', 'nodes'],
      requireOneSlicingArgument: true,
    }
  }
  return {
    ...base,
    sized: list,
    slicingArguments: [],
    assumedSize: undefined,
    sizedFields: undefined,
    requireOneSlicingArgument: false,
  }
}

/**
 * `extensions.listSize` of a code-first field: the arguments of `@listSize` (IBM cost spec).
 *
 * @example
 * ```ts
 * const field = { type: new GraphQLList(Order), args: { first: { type: GraphQLInt } }, extensions: { listSize: { slicingArguments: ['first'] } satisfies ListSizeExtension } }
 * ```
 */
export interface ListSizeExtension {
  readonly assumedSize?: number
  readonly slicingArguments?: readonly string[]
  readonly sizedFields?: readonly string[]
  readonly requireOneSlicingArgument?: boolean
}

function strings(value: unknown): readonly string[] | undefined {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : undefined
}

const NO_WEIGHTS: ReadonlyMap<string, number> = new Map()

function argumentWeights(field: GraphQLField<unknown, unknown>): ReadonlyMap<string, number> {
  let weights: Map<string, number> | undefined
  for (const arg of field.args) {
    const extension = arg.extensions['cost']
    const weight =
      numberArgument(directive(arg.astNode?.directives, 'cost'), 'weight') ??
      (typeof extension === 'number' ? extension : undefined)
    if (weight === undefined) continue
    weights ??= new Map()
    weights.set(arg.name, weight)
  }
  return weights ?? NO_WEIGHTS
}

function typeWeight(type: GraphQLNamedType): number | undefined {
  const extension = type.extensions['cost']
  if (typeof extension === 'number') return extension
  let weight = numberArgument(directive(type.astNode?.directives, 'cost'), 'weight')
  for (const node of type.extensionASTNodes)
    weight ??= numberArgument(directive(node.directives, 'cost'), 'weight')
  return weight
}

function directive(
  directives: readonly ConstDirectiveNode[] | undefined,
  name: string,
): ConstDirectiveNode | undefined {
  return directives?.find((node) => node.name.value === name)
}

function argument(node: ConstDirectiveNode | undefined, name: string): ValueNode | undefined {
  return node?.arguments?.find((arg) => arg.name.value === name)?.value
}

// The weight is a String holding a Float (IBM cost spec: "weight: String!"), Int and Float literals are accepted too.
function numberArgument(node: ConstDirectiveNode | undefined, name: string): number | undefined {
  const value = argument(node, name)
  if (value === undefined) return undefined
  if (value.kind !== Kind.STRING && value.kind !== Kind.INT && value.kind !== Kind.FLOAT)
    return undefined
  const number = Number(value.value)
  return Number.isFinite(number) ? number : undefined
}

function stringsArgument(
  node: ConstDirectiveNode | undefined,
  name: string,
): readonly string[] | undefined {
  const value = argument(node, name)
  if (value === undefined) return undefined
  if (value.kind === Kind.STRING) return [value.value]
  if (value.kind !== Kind.LIST) return undefined
  return value.values.flatMap((item) => (item.kind === Kind.STRING ? [item.value] : []))
}

function booleanArgument(node: ConstDirectiveNode | undefined, name: string): boolean | undefined {
  const value = argument(node, name)
  return value?.kind === Kind.BOOLEAN ? value.value : undefined
}
