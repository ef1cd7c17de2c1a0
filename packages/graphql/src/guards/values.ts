/**
 * Argument and directive values under one request's coerced variables, read straight from the
 * syntax tree for the cost pass (GraphQL spec §6.4.1 CoerceArgumentValues, §3.13 @skip/@include),
 * on graphql-js 16 and 17.
 *
 * @module
 */
import {
  type FieldNode,
  type GraphQLArgument,
  type GraphQLField,
  getArgumentValues,
  Kind,
  type SelectionNode,
  versionInfo,
} from 'graphql'

/** Coerced variable values (graphql-js `getVariableValues`). @internal */
export type Variables = Readonly<Record<string, unknown>>

const hasOwn = Object.prototype.hasOwnProperty

/** An argument's value: the literal (Int), the variable's coerced value when sent, else the schema default. @internal */
export function argumentValue(
  field: GraphQLField<unknown, unknown>,
  node: FieldNode,
  name: string,
  variables: Variables,
): unknown {
  const value = node.arguments?.find((arg) => arg.name.value === name)?.value
  if (value !== undefined) {
    if (value.kind === Kind.INT) return Number(value.value)
    if (value.kind !== Kind.VARIABLE) return undefined
    if (hasOwn.call(variables, value.name.value)) return variables[value.name.value]
  }
  const definition = field.args.find((arg) => arg.name === name)
  return definition === undefined ? undefined : defaultValue(definition)
}

/** Whether the document itself gives the argument a value: a literal, or a variable the request sent. @internal */
export function sent(node: FieldNode, name: string, variables: Variables): boolean {
  const value = node.arguments?.find((arg) => arg.name.value === name)?.value
  if (value === undefined || value.kind === Kind.NULL) return false
  return value.kind !== Kind.VARIABLE || (variables[value.name.value] ?? null) !== null
}

/** Every argument coerced as graphql-js does, as graphql-query-complexity gives them to estimators; `{}` if they do not coerce. @internal */
export function argumentValues(
  field: GraphQLField<unknown, unknown>,
  node: FieldNode,
  variables: Variables,
): Record<string, unknown> {
  try {
    // graphql-js 17 takes { sources, coerced }; 16 the coerced map itself.
    const values = versionInfo.major >= 17 ? { sources: {}, coerced: variables } : variables
    return getArgumentValues(field, node, values as Record<string, unknown>)
  } catch {
    return {}
  }
}

/** GraphQL spec §3.13.2, §3.13.3: false when `@skip(if: true)` or `@include(if: false)`. @internal */
export function included(selection: SelectionNode, variables: Variables): boolean {
  const directives = selection.directives
  if (directives === undefined || directives.length === 0) return true
  for (const directive of directives) {
    const name = directive.name.value
    if (name !== 'skip' && name !== 'include') continue
    const condition = directive.arguments?.find((arg) => arg.name.value === 'if')?.value
    let value: unknown
    if (condition?.kind === Kind.BOOLEAN) value = condition.value
    else if (condition?.kind === Kind.VARIABLE) value = variables[condition.name.value]
    if (typeof value !== 'boolean') continue
    if (value === (name === 'skip')) return false
  }
  return true
}

// graphql-js 16 keeps `defaultValue`; 17 keeps `default: { value } | { literal }`.
function defaultValue(argument: GraphQLArgument): unknown {
  if (argument.defaultValue !== undefined) return argument.defaultValue
  const fallback = (
    argument as { default?: { value?: unknown; literal?: { kind: string; value?: string } } }
  ).default
  if (fallback === undefined) return undefined
  if (fallback.value !== undefined) return fallback.value
  return fallback.literal?.kind === Kind.INT ? Number(fallback.literal.value) : undefined
}
