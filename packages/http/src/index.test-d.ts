import type { Handler as CoreHandler, Middleware as CoreMiddleware } from '@api-blocks/core'
import type { StandardSchemaV1 } from '@api-blocks/problem-details'
import { describe, expectTypeOf, test } from 'vitest'
import { z } from 'zod'
import type {
  BareItem,
  Dictionary,
  Handler,
  InnerList,
  Item,
  ListMember,
  Middleware,
  Negotiation,
} from './index.ts'
import {
  compose,
  isInnerList,
  negotiatedOf,
  parseDictionary,
  parseItem,
  parseList,
  problemResponse,
  readJson,
  requestIdOf,
  serializeDictionary,
} from './index.ts'

const request = new Request('https://api.example/')

describe('readJson infers the value from the schema', () => {
  test('a zod schema: its output type', async () => {
    const Order = z.object({ sku: z.string(), quantity: z.string().transform(Number) })
    expectTypeOf(await readJson(request, Order)).toEqualTypeOf<{ sku: string; quantity: number }>()
  })

  test('a hand-written Standard Schema', async () => {
    const positive: StandardSchemaV1<unknown, number> = {
      '~standard': { version: 1, vendor: 'mine', validate: (value) => ({ value: Number(value) }) },
    }
    expectTypeOf(await readJson(request, positive)).toEqualTypeOf<number>()
  })

  test('anything else is not a schema', () => {
    // @ts-expect-error: a parse function is not a Standard Schema
    readJson(request, (value: unknown) => value)
    // @ts-expect-error: the schema is required
    readJson(request)
  })
})

describe('the per-request values, through core context keys', () => {
  test('requestIdOf and negotiatedOf', () => {
    expectTypeOf(requestIdOf(request)).toEqualTypeOf<string | undefined>()
    expectTypeOf(negotiatedOf(request)).toEqualTypeOf<Negotiation | undefined>()
    expectTypeOf(negotiatedOf(request)?.vary).toEqualTypeOf<string[] | undefined>()
  })
})

describe('Handler and Middleware are core types', () => {
  test('re-exported, not redeclared', () => {
    expectTypeOf<Handler>().toEqualTypeOf<CoreHandler>()
    expectTypeOf<Middleware>().toEqualTypeOf<CoreMiddleware>()
    expectTypeOf(compose()).toEqualTypeOf<(handler: Handler) => Handler>()
    // @ts-expect-error: a handler answers a Promise of a Response
    compose()(() => 'text')
  })

  test('problem responses take headers as a plain record (no DOM HeadersInit)', () => {
    expectTypeOf(problemResponse)
      .parameter(2)
      .toEqualTypeOf<ConstructorParameters<typeof Headers>[0] | undefined>()
  })
})

describe('structured fields', () => {
  test('the parsers answer the model or undefined', () => {
    expectTypeOf(parseItem('1')).toEqualTypeOf<Item | undefined>()
    expectTypeOf(parseList('a')).toEqualTypeOf<ListMember[] | undefined>()
    expectTypeOf(parseDictionary('a=1')).toEqualTypeOf<Dictionary | undefined>()
  })

  test('isInnerList narrows a member', () => {
    const member = {} as ListMember
    if (isInnerList(member)) expectTypeOf(member).toEqualTypeOf<InnerList>()
    else expectTypeOf(member).toEqualTypeOf<Item>()
  })

  test('bare items are tagged by type', () => {
    const token: BareItem = { type: 'token', value: 'gzip' }
    if (token.type === 'token') expectTypeOf(token.value).toEqualTypeOf<string>()
    // @ts-expect-error: a byte sequence holds bytes
    const bytes: BareItem = { type: 'binary', value: 'aGVsbG8=' }
    // @ts-expect-error: not an RFC 9651 type
    const float: BareItem = { type: 'float', value: 1.5 }
    void [bytes, float]
  })

  test('a dictionary serialises from pairs or a Map', () => {
    const one: Item = { value: { type: 'integer', value: 1 }, params: [] }
    expectTypeOf(serializeDictionary(new Map([['a', one]]))).toEqualTypeOf<string>()
    expectTypeOf(serializeDictionary([['a', one]])).toEqualTypeOf<string>()
  })
})
