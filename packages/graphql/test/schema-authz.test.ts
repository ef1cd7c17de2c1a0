import type { Principal } from '@api-blocks/core'
import type { ExecutionResult } from 'graphql'
import {
  buildSchema,
  extendSchema,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  graphql,
  parse,
  subscribe,
} from 'graphql'
import { describe, expect, test } from 'vitest'
import { authDirectivesSDL, authorizeSchema, requireScopes } from '../src/index.ts'

// A refused field is null with one error at its path; the rest of the data is returned
// (GraphQL spec §6.4.4 Handling Field Errors). Scopes: RFC 6749 §3.3.

const reader: Principal = { subject: 'u1', scopes: ['read:orders'], claims: {} }
const admin: Principal = {
  subject: 'root',
  scopes: ['read:orders', 'write:orders', 'admin'],
  claims: {},
}
const nobody: Principal = { subject: 'u2', scopes: [], claims: {} }

function sdlSchema() {
  return authorizeSchema(
    buildSchema(`${authDirectivesSDL}
      type Order { id: ID! total: Int @requiresScopes(scopes: ["admin"]) }
      type Audit @requiresScopes(scopes: ["admin"]) { who: String, what: String @requiresScopes(scopes: "write:orders") }
      type Query {
        hello: String
        orders: [Order!] @requiresScopes(scopes: ["read:orders"])
        strict: String! @requiresScopes(scopes: ["admin"])
        audit: Audit
      }
      type Subscription { orderChanged: Order @requiresScopes(scopes: ["read:orders"]) }
    `),
  )
}

const rootValue = {
  hello: 'world',
  orders: () => [{ id: 'o1', total: 12 }],
  strict: 'secret',
  audit: { who: 'ada', what: 'refund' },
}

async function run(
  schema: GraphQLSchema,
  source: string,
  principal: Principal | undefined,
): Promise<ExecutionResult> {
  return graphql({ schema, source, rootValue, contextValue: { principal } })
}

const codes = (result: ExecutionResult) =>
  (result.errors ?? []).map((error) => [error.path?.join('.'), error.extensions['code']])

describe('authorizeSchema with @requiresScopes', () => {
  const schema = sdlSchema()

  test('MUST answer the field with the scope', async () => {
    const result = await run(schema, '{ hello orders { id } }', reader)
    expect(result).toEqual({ data: { hello: 'world', orders: [{ id: 'o1' }] } })
  })

  test('MUST answer FORBIDDEN at the path, null there, and the rest of the data', async () => {
    const result = await run(schema, '{ hello orders { id } }', nobody)
    expect(result.data).toEqual({ hello: 'world', orders: null })
    expect(result.errors).toHaveLength(1)
    expect(result.errors![0]!.path).toEqual(['orders'])
    expect(result.errors![0]!.extensions).toEqual({ code: 'FORBIDDEN', scopes: ['read:orders'] })
  })

  test('MUST answer UNAUTHENTICATED without a principal', async () => {
    const result = await run(schema, '{ hello orders { id } }', undefined)
    expect(result.data).toEqual({ hello: 'world', orders: null })
    expect(codes(result)).toEqual([['orders', 'UNAUTHENTICATED']])
  })

  test('a nested field: null inside the list item, the item kept', async () => {
    const result = await run(schema, '{ orders { id total } }', reader)
    expect(result.data).toEqual({ orders: [{ id: 'o1', total: null }] })
    expect(codes(result)).toEqual([['orders.0.total', 'FORBIDDEN']])
    expect((await run(schema, '{ orders { id total } }', admin)).data).toEqual({
      orders: [{ id: 'o1', total: 12 }],
    })
  })

  test('a refused non-null field passes the null to its parent (spec §6.4.4)', async () => {
    const result = await run(schema, '{ strict }', reader)
    expect(result.data).toBeNull()
    expect(codes(result)).toEqual([['strict', 'FORBIDDEN']])
  })

  test('on an object type: every field requires it; a field adds its own scopes', async () => {
    const partial = await run(schema, '{ audit { who what } }', {
      ...nobody,
      scopes: ['admin'],
    })
    expect(partial.data).toEqual({ audit: { who: 'ada', what: null } })
    expect(partial.errors![0]!.extensions).toEqual({
      code: 'FORBIDDEN',
      scopes: ['admin', 'write:orders'],
    })
    const none = await run(schema, '{ audit { who } }', reader)
    expect(codes(none)).toEqual([['audit.who', 'FORBIDDEN']])
    expect((await run(schema, '{ audit { who what } }', admin)).errors).toBeUndefined()
  })

  test('a field of an interface with scopes requires them in every implementation', async () => {
    const withInterface = authorizeSchema(
      buildSchema(`${authDirectivesSDL}
        interface Owned { owner: String @requiresScopes(scopes: ["admin"]) }
        type Order implements Owned { id: ID owner: String }
        type Query { order: Order }`),
    )
    const root = { order: { id: 'o1', owner: 'ada' } }
    const refused = await graphql({
      schema: withInterface,
      source: '{ order { id owner } }',
      rootValue: root,
      contextValue: { principal: reader },
    })
    expect(refused.data).toEqual({ order: { id: 'o1', owner: null } })
    expect(codes(refused)).toEqual([['order.owner', 'FORBIDDEN']])
    const granted = await graphql({
      schema: withInterface,
      source: '{ order { owner } }',
      rootValue: root,
      contextValue: { principal: admin },
    })
    expect(granted).toEqual({ data: { order: { owner: 'ada' } } })
  })

  test('introspection and __typename are never refused', async () => {
    const result = await run(schema, '{ __typename __schema { queryType { name } } }', undefined)
    expect(result.errors).toBeUndefined()
  })

  test('authorising twice wraps nothing twice', () => {
    const field = schema.getQueryType()!.getFields()['orders']!
    const resolve = field.resolve
    authorizeSchema(schema)
    expect(field.resolve).toBe(resolve)
  })

  test('a custom principal getter', async () => {
    const custom = authorizeSchema(
      buildSchema(
        `${authDirectivesSDL} type Query { orders: [String] @requiresScopes(scopes: ["read:orders"]) }`,
      ),
      { principal: (context) => (context as { user?: Principal }).user },
    )
    const source = '{ orders }'
    const root = { orders: ['a'] }
    expect(
      await graphql({ schema: custom, source, rootValue: root, contextValue: { user: reader } }),
    ).toEqual({ data: { orders: ['a'] } })
    const refused = await graphql({
      schema: custom,
      source,
      rootValue: root,
      contextValue: { principal: reader },
    })
    expect(codes(refused)).toEqual([['orders', 'UNAUTHENTICATED']])
  })

  test('a subscription: refused when it starts, granted events flow', async () => {
    const subscriptionSchema = sdlSchema()
    const field = subscriptionSchema.getSubscriptionType()!.getFields()['orderChanged']!
    // graphql-js subscribe() runs `subscribe` for the event stream; wire one as X does.
    async function* events() {
      yield { orderChanged: { id: 'o9' } }
    }
    field.subscribe = events
    authorizeSchema(subscriptionSchema)
    const document = parse('subscription { orderChanged { id } }')
    const refused = await subscribe({
      schema: subscriptionSchema,
      document,
      contextValue: { principal: nobody },
    })
    expect(Symbol.asyncIterator in refused).toBe(false)
    expect(codes(refused as ExecutionResult)).toEqual([['orderChanged', 'FORBIDDEN']])

    const granted = await subscribe({
      schema: subscriptionSchema,
      document,
      contextValue: { principal: reader },
    })
    const iterator = granted as AsyncGenerator<ExecutionResult>
    expect((await iterator.next()).value).toEqual({ data: { orderChanged: { id: 'o9' } } })
    await iterator.return(undefined)
  })

  test('a malformed scopes argument is refused when the schema is authorised', () => {
    expect(() =>
      authorizeSchema(
        buildSchema(`directive @requiresScopes(scopes: [String!]!) on FIELD_DEFINITION
          type Query { x: String @requiresScopes(scopes: [1]) }`),
      ),
    ).toThrow(TypeError)
  })
})

describe('code-first', () => {
  const Order = new GraphQLObjectType({
    name: 'Order',
    fields: { id: { type: GraphQLString } },
  })
  const schema = authorizeSchema(
    new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: {
          hello: { type: GraphQLString, resolve: () => 'world' },
          orders: {
            type: new GraphQLList(new GraphQLNonNull(Order)),
            resolve: requireScopes(['read:orders'], () => [{ id: 'o1' }]),
          },
          refunds: {
            type: GraphQLString,
            extensions: { requiresScopes: ['write:orders'] },
            resolve: () => 'r1',
          },
          both: {
            type: GraphQLString,
            // The wrapper's scope and the schema's: both required.
            extensions: { requiresScopes: ['admin'] },
            resolve: requireScopes(['read:orders'], () => 'both'),
          },
          owner: {
            type: GraphQLString,
            // requireScopes without a resolver reads the field from the parent.
            resolve: requireScopes(['admin']),
          },
        },
      }),
    }),
  )

  test('requireScopes wraps a resolver: partial result', async () => {
    const result = await run(schema, '{ hello orders { id } refunds }', reader)
    expect(result.data).toEqual({ hello: 'world', orders: [{ id: 'o1' }], refunds: null })
    expect(result.errors![0]!.extensions).toEqual({ code: 'FORBIDDEN', scopes: ['write:orders'] })
  })

  test('requireScopes and extensions.requiresScopes on one field: both required', async () => {
    const readerOnly = await run(schema, '{ both }', reader)
    expect(readerOnly.errors![0]!.extensions).toEqual({ code: 'FORBIDDEN', scopes: ['admin'] })
    const adminOnly = await run(schema, '{ both }', { ...admin, scopes: ['admin'] })
    expect(adminOnly.errors![0]!.extensions).toEqual({
      code: 'FORBIDDEN',
      scopes: ['read:orders'],
    })
    expect(await run(schema, '{ both }', admin)).toEqual({ data: { both: 'both' } })
  })

  test('requireScopes without resolve: the default resolver', async () => {
    const result = await graphql({
      schema,
      source: '{ owner }',
      rootValue: { owner: 'ada' },
      contextValue: { principal: admin },
    })
    expect(result).toEqual({ data: { owner: 'ada' } })
  })

  test('requireScopes refuses scopes that are not strings', () => {
    expect(() => requireScopes(['a', 1 as unknown as string])).toThrow(TypeError)
  })
})

describe('a schema derived from an authorised one (extendSchema copies field configs)', () => {
  function base() {
    const schema = buildSchema(
      `${authDirectivesSDL} type Query { orders: String @requiresScopes(scopes: ["read:orders"]) }`,
    )
    schema.getQueryType()!.getFields()['orders']!.resolve = () => 'all orders'
    return authorizeSchema(schema)
  }
  const adminOnType = parse('extend type Query @requiresScopes(scopes: ["admin"])')
  const ask = (schema: GraphQLSchema, contextValue: unknown) =>
    graphql({ schema, source: '{ orders }', contextValue })

  test('enforces its own union of scopes; the original schema keeps its own', async () => {
    const original = base()
    const derived = authorizeSchema(extendSchema(original, adminOnType))
    expect(codes(await ask(derived, { principal: reader }))).toEqual([['orders', 'FORBIDDEN']])
    expect((await ask(derived, { principal: reader })).errors![0]!.extensions).toEqual({
      code: 'FORBIDDEN',
      scopes: ['admin', 'read:orders'],
    })
    expect(await ask(derived, { principal: admin })).toEqual({ data: { orders: 'all orders' } })
    expect(await ask(original, { principal: reader })).toEqual({
      data: { orders: 'all orders' },
    })
  })

  test('uses its own principal getter, and wraps the resolver, not the first wrapper', async () => {
    const derived = authorizeSchema(extendSchema(base(), adminOnType), {
      principal: (context) => (context as { user?: Principal }).user,
    })
    // A wrapper around the first wrapper would still look for context.principal.
    expect(await ask(derived, { user: admin })).toEqual({ data: { orders: 'all orders' } })
    expect(codes(await ask(derived, { principal: admin }))).toEqual([['orders', 'UNAUTHENTICATED']])
  })

  test('the same scopes and getter: the wrapper is kept', () => {
    const original = base()
    const derived = authorizeSchema(extendSchema(original, parse('scalar Unused')))
    expect(derived.getQueryType()!.getFields()['orders']!.resolve).toBe(
      original.getQueryType()!.getFields()['orders']!.resolve,
    )
  })

  test('a subscription field of a derived schema requires its own scopes', async () => {
    const schema = buildSchema(`${authDirectivesSDL} type Query { x: String }
      type Subscription { orderChanged: String @requiresScopes(scopes: ["read:orders"]) }`)
    async function* events() {
      yield { orderChanged: 'o9' }
    }
    schema.getSubscriptionType()!.getFields()['orderChanged']!.subscribe = events
    authorizeSchema(schema)
    const derived = authorizeSchema(
      extendSchema(schema, parse('extend type Subscription @requiresScopes(scopes: ["admin"])')),
    )
    const refused = await subscribe({
      schema: derived,
      document: parse('subscription { orderChanged }'),
      contextValue: { principal: reader },
    })
    expect(codes(refused as ExecutionResult)).toEqual([['orderChanged', 'FORBIDDEN']])
  })
})

describe('a malformed principal fails closed', () => {
  const schema = authorizeSchema(
    buildSchema(
      `${authDirectivesSDL} type Query { secret: String @requiresScopes(scopes: ["admin"]) }`,
    ),
  )
  const rootValue = { secret: 's' }
  const codeFirst = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        secret: { type: GraphQLString, resolve: requireScopes(['admin'], () => 's') },
        custom: {
          type: GraphQLString,
          resolve: requireScopes(['admin'], () => 's', {
            principal: (context) => (context as { user?: Principal }).user,
          }),
        },
      },
    }),
  })
  // The raw OAuth `scope` claim is one space-separated string (RFC 6749 §3.3): a substring
  // match would grant `admin` to `notadmin`.
  const stringScopes = { subject: 'u3', scopes: 'read:orders notadmin', claims: {} }

  test('scopes that are a string, not an array: FORBIDDEN', async () => {
    for (const target of [schema, codeFirst]) {
      const result = await graphql({
        schema: target,
        source: '{ secret }',
        rootValue,
        contextValue: { principal: stringScopes },
      })
      expect(codes(result)).toEqual([['secret', 'FORBIDDEN']])
    }
  })

  test('no scopes member, or scopes not all strings: FORBIDDEN', async () => {
    for (const scopes of [undefined, ['admin', 1], { includes: () => true }]) {
      const result = await graphql({
        schema,
        source: '{ secret }',
        rootValue,
        contextValue: { principal: { subject: 'u4', scopes, claims: {} } },
      })
      expect(codes(result)).toEqual([['secret', 'FORBIDDEN']])
    }
  })

  test('a principal getter answering a non-object: UNAUTHENTICATED', async () => {
    for (const user of ['admin', 42, null, ['admin']]) {
      const result = await graphql({
        schema: codeFirst,
        source: '{ custom }',
        contextValue: { user },
      })
      expect(codes(result)).toEqual([['custom', 'UNAUTHENTICATED']])
    }
  })
})
