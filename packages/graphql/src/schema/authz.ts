/**
 * Field authorisation from the bearer `Principal` (docs/spec.md §4.1 and §2.1): a field, or
 * every field of an object type, requires OAuth 2.0 scopes (RFC 6749 §3.3). The check runs in
 * the field's resolver, so a refused field resolves to `null` with one error at its path and
 * the rest of the result is still returned (GraphQL spec §6.4.4 "Handling Field Errors": a
 * field error makes the field null; a non-null field passes the null to its parent).
 *
 * - No principal: `UNAUTHENTICATED`.
 * - A required scope missing: `FORBIDDEN`, `extensions.scopes` listing every scope the field
 *   requires (the principal needs all of them).
 *
 * @module
 */
import type { Principal } from '@api-blocks/core'
import type {
  DirectiveNode,
  GraphQLField,
  GraphQLFieldResolver,
  GraphQLInterfaceType,
  GraphQLObjectType,
  GraphQLSchema,
} from 'graphql'
import { defaultFieldResolver, isObjectType, Kind } from 'graphql'
import { codedError } from '../error.ts'

/**
 * The SDL of the `@requiresScopes` directive: add it to your type definitions, then call
 * {@link authorizeSchema} on the built schema. On an object type it applies to every field of
 * that type; on a field and its type, both lists are required.
 *
 * @example
 * ```ts
 * const schema = authorizeSchema(
 *   buildSchema(`${authDirectivesSDL}
 *     type Query { orders: [String!]! @requiresScopes(scopes: ["read:orders"]) }`),
 * )
 * ```
 */
export const authDirectivesSDL: string =
  'directive @requiresScopes(scopes: [String!]!) on FIELD_DEFINITION | OBJECT\n'

/**
 * Where {@link authorizeSchema} and {@link requireScopes} find the principal of an operation.
 *
 * @example
 * ```ts
 * const options: AuthorizeOptions = {
 *   principal: (context) => (context as { user?: Principal }).user,
 * }
 * ```
 */
export interface AuthorizeOptions {
  /**
   * The principal from the GraphQL context value. Default: its `principal` member, which is
   * what the HTTP handler and the WebSocket server put there by default.
   */
  readonly principal?: (context: unknown) => Principal | undefined
}

type Resolver = GraphQLFieldResolver<unknown, unknown>
type PrincipalOf = (context: unknown) => Principal | undefined

function defaultPrincipal(context: unknown): Principal | undefined {
  if (typeof context !== 'object' || context === null) return undefined
  return (context as { principal?: Principal }).principal
}

// Fails closed on what a getter may really answer: a principal that is not an object is no
// principal, and scopes that are not an array of strings are no scopes (the raw OAuth `scope`
// claim is one space-separated string, RFC 6749 §3.3: `includes` on it would match substrings).
function check(scopes: readonly string[], principalOf: PrincipalOf, context: unknown): void {
  const principal: unknown = principalOf(context)
  if (typeof principal !== 'object' || principal === null || Array.isArray(principal)) {
    throw codedError('UNAUTHENTICATED', 'This field requires an authenticated caller.', {
      scopes,
    })
  }
  const { scopes: claimed } = principal as { scopes?: unknown }
  const granted: readonly unknown[] =
    Array.isArray(claimed) && claimed.every((scope) => typeof scope === 'string') ? claimed : []
  for (const scope of scopes) {
    if (!granted.includes(scope)) {
      throw codedError('FORBIDDEN', `This field requires the scopes ${scopes.join(', ')}.`, {
        scopes,
      })
    }
  }
}

function guard<S, C, A>(
  scopes: readonly string[],
  resolve: GraphQLFieldResolver<S, C, A>,
  principalOf: PrincipalOf,
): GraphQLFieldResolver<S, C, A> {
  return (source, args, context, info) => {
    check(scopes, principalOf, context)
    return resolve(source, args, context, info)
  }
}

// Each resolver authorizeSchema made, with what it wraps and checks. A schema derived from an
// authorised one (extendSchema, graphql-tools mapSchema) copies the wrappers into its own
// fields: one with the same scopes and getter is kept (authorising twice wraps nothing twice);
// otherwise the original resolver is wrapped again, so every schema checks its own scopes with
// its own getter and no wrapper is ever wrapped. A requireScopes resolver is no such wrapper:
// the schema's scopes are checked around it.
const wrapped = new WeakMap<
  Resolver,
  {
    readonly resolve: Resolver
    readonly scopes: readonly string[]
    readonly principalOf: PrincipalOf
  }
>()

function schemaGuard(
  scopes: readonly string[],
  resolve: Resolver,
  principalOf: PrincipalOf,
): Resolver {
  const previous = wrapped.get(resolve)
  if (
    previous !== undefined &&
    previous.principalOf === principalOf &&
    previous.scopes.length === scopes.length &&
    scopes.every((scope) => previous.scopes.includes(scope))
  ) {
    return resolve
  }
  const original = previous?.resolve ?? resolve
  const guarded = guard(scopes, original, principalOf)
  wrapped.set(guarded, { resolve: original, scopes, principalOf })
  return guarded
}

/**
 * A resolver that requires `scopes` of the principal before it runs `resolve` (default: the
 * field's own value on its parent, as graphql-js resolves it). For code-first schemas; SDL
 * schemas use `@requiresScopes` and {@link authorizeSchema}.
 *
 * @example
 * ```ts
 * const Query = new GraphQLObjectType({
 *   name: 'Query',
 *   fields: {
 *     orders: {
 *       type: new GraphQLList(Order),
 *       resolve: requireScopes(['read:orders'], () => store.list()),
 *     },
 *   },
 * })
 * ```
 */
export function requireScopes<S = unknown, C = unknown, A = Record<string, unknown>>(
  scopes: readonly string[],
  resolve?: GraphQLFieldResolver<S, C, A>,
  options?: AuthorizeOptions,
): GraphQLFieldResolver<S, C, A> {
  const required = scopesOf(scopes, 'requireScopes')
  return guard(
    required,
    resolve ?? (defaultFieldResolver as GraphQLFieldResolver<S, C, A>),
    options?.principal ?? defaultPrincipal,
  )
}

function scopesOf(value: unknown, where: string): readonly string[] {
  if (!Array.isArray(value) || !value.every((scope) => typeof scope === 'string')) {
    throw new TypeError(`${where}: scopes must be an array of strings.`)
  }
  return Object.freeze([...value])
}

// The `scopes` argument of `@requiresScopes` as written in SDL: a list of strings, or one
// string (GraphQL spec §3.11 input coercion of a list from a single value).
function directiveScopes(
  nodes: readonly (DirectiveNode | undefined)[],
  where: string,
): readonly string[] {
  const scopes: string[] = []
  for (const node of nodes) {
    if (node === undefined) continue
    const argument = node.arguments?.find((arg) => arg.name.value === 'scopes')
    const value = argument?.value
    const items = value?.kind === Kind.LIST ? value.values : value === undefined ? [] : [value]
    for (const item of items) {
      if (item.kind !== Kind.STRING) {
        throw new TypeError(`@requiresScopes on ${where}: scopes must be a list of strings.`)
      }
      scopes.push(item.value)
    }
  }
  return scopes
}

function directivesOf(
  nodes: readonly (
    | { readonly directives?: readonly DirectiveNode[] | undefined }
    | null
    | undefined
  )[],
): DirectiveNode[] {
  return nodes.flatMap(
    (node) => node?.directives?.filter((d) => d.name.value === 'requiresScopes') ?? [],
  )
}

function typeScopes(type: GraphQLObjectType): readonly string[] {
  const fromSdl = directiveScopes(
    directivesOf([type.astNode, ...(type.extensionASTNodes ?? [])]),
    type.name,
  )
  const extension = type.extensions?.['requiresScopes']
  return extension === undefined
    ? fromSdl
    : [...fromSdl, ...scopesOf(extension, `${type.name} extensions.requiresScopes`)]
}

function fieldScopes(
  type: GraphQLObjectType | GraphQLInterfaceType,
  field: GraphQLField<unknown, unknown>,
): readonly string[] {
  const where = `${type.name}.${field.name}`
  const fromSdl = directiveScopes(directivesOf([field.astNode]), where)
  const extension = field.extensions?.['requiresScopes']
  return extension === undefined
    ? fromSdl
    : [...fromSdl, ...scopesOf(extension, `${where} extensions.requiresScopes`)]
}

/**
 * Wraps, in place, the resolvers (and subscription `subscribe` functions) of every field that
 * requires scopes: through `@requiresScopes` on the field, on its object type, or on the same
 * field of an interface the type implements (SDL), or through `extensions: { requiresScopes:
 * [...] }` on any of these (code-first); it needs them all. Returns the same schema.
 * Call it after the resolvers are in place (a resolver assigned later is not checked); calling
 * it again wraps the new ones and nothing twice. A schema derived from an authorised one
 * (`extendSchema`, graphql-tools `mapSchema`) checks its own scopes and getter once authorised. Introspection fields are never wrapped.
 *
 * @example
 * ```ts
 * const schema = authorizeSchema(buildSchema(typeDefs), {
 *   principal: (context) => (context as { principal?: Principal }).principal,
 * })
 * // { orders { id } } without read:orders → data.orders null, errors[0].extensions.code 'FORBIDDEN'
 * ```
 */
export function authorizeSchema(schema: GraphQLSchema, options?: AuthorizeOptions): GraphQLSchema {
  const principalOf = options?.principal ?? defaultPrincipal
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue
    const required = typeScopes(type)
    for (const field of Object.values(type.getFields())) {
      // A field declared on an interface with scopes requires them in every implementation.
      const inherited = type.getInterfaces().flatMap((face) => {
        const declared = face.getFields()[field.name]
        return declared === undefined ? [] : fieldScopes(face, declared)
      })
      const scopes = [...new Set([...required, ...inherited, ...fieldScopes(type, field)])]
      if (scopes.length === 0) continue
      Object.freeze(scopes)
      field.resolve = schemaGuard(scopes, field.resolve ?? defaultFieldResolver, principalOf)
      if (field.subscribe !== undefined) {
        field.subscribe = schemaGuard(scopes, field.subscribe, principalOf)
      }
    }
  }
  return schema
}
