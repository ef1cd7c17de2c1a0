import type { Connection } from '@api-blocks/pagination'
import { createCursorCodec } from '@api-blocks/pagination'
import type { GraphQLFieldResolver } from 'graphql'
import { describe, expectTypeOf, test } from 'vitest'
import { requireScopes, resolveConnection } from '../src/index.ts'

describe('requireScopes', () => {
  test('keeps the resolver type it wraps', () => {
    const resolve: GraphQLFieldResolver<{ id: string }, { tenant: string }, { first: number }> = (
      source,
      args,
      context,
    ) => `${source.id}:${args.first}:${context.tenant}`
    expectTypeOf(requireScopes(['read:orders'], resolve)).toEqualTypeOf(resolve)
  })

  test('scopes are strings', () => {
    // @ts-expect-error scopes are a list of strings
    requireScopes([1])
  })
})

describe('resolveConnection', () => {
  test('the connection holds the rows fetch returns', () => {
    const cursors = createCursorCodec({ keys: [{ id: 'k', secret: 'x'.repeat(32) }] }).forQuery({
      order: { keys: ['id'], direction: 'asc' },
    })
    const connection = resolveConnection(
      { first: 1 },
      { cursors, defaultLimit: 10, maxLimit: 10 },
      async () => [{ id: 'a', total: 1 }],
    )
    expectTypeOf(connection).toEqualTypeOf<Promise<Connection<{ id: string; total: number }>>>()
    // @ts-expect-error rows are objects (their cursors are read from their keys)
    resolveConnection({}, { cursors, defaultLimit: 10, maxLimit: 10 }, async () => [1])
  })
})
