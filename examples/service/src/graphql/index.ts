// The service's GraphQL schema, executable: the SDL of schema.ts with the directive definitions
// of @api-blocks/graphql (the IBM cost directives, @requiresScopes), the resolvers of
// resolvers.ts attached, and field authorisation wrapped around the fields that require scopes.
import type { GuardOptions } from '@api-blocks/graphql'
import { authDirectivesSDL, authorizeSchema, costDirectivesSDL } from '@api-blocks/graphql'
import type { GraphQLSchema } from 'graphql'
import { buildSchema, isObjectType } from 'graphql'
import type { FieldResolvers, GraphQLContext, OrderResolverOptions } from './resolvers.ts'
import { orderResolvers } from './resolvers.ts'
import { ORDER_TYPE_DEFS } from './schema.ts'

/**
 * The guard limits of /graphql (every transport: POST, GET, SSE, WebSocket): the package's
 * defaults but for mutations, which cost their fields (1 per write) and no flat base, so that
 * a createOrder costs what POST /v1/orders costs: one unit of the rate limit.
 */
export const GUARDS: GuardOptions = { mutationCost: 0, maxPageSize: 100 }

/** Builds the executable, authorised schema of the orders. */
export function orderSchema(options: OrderResolverOptions): GraphQLSchema {
  const schema = buildSchema([costDirectivesSDL, authDirectivesSDL, ORDER_TYPE_DEFS].join('\n'))
  attach(schema, orderResolvers(options))
  // @requiresScopes read from the principal of the context: no principal is UNAUTHENTICATED
  // (never the case behind the bearer layer), a missing scope FORBIDDEN at the field's path.
  return authorizeSchema(schema, { principal: (context) => (context as GraphQLContext).principal })
}

/** Sets the resolvers on the fields of a schema built from SDL. */
function attach(schema: GraphQLSchema, resolvers: FieldResolvers): void {
  for (const [typeName, fields] of Object.entries(resolvers)) {
    const type = schema.getType(typeName)
    if (!isObjectType(type)) throw new Error(`No object type ${typeName} in the schema`)
    const defined = type.getFields()
    for (const [fieldName, resolver] of Object.entries(fields)) {
      const field = defined[fieldName]
      if (field === undefined) throw new Error(`No field ${typeName}.${fieldName} in the schema`)
      if (typeof resolver === 'function') field.resolve = resolver
      else {
        field.subscribe = resolver.subscribe
        field.resolve = resolver.resolve
      }
    }
  }
}
