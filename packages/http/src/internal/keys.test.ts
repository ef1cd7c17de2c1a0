import { getContext } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import { compose } from '../compose.ts'
import { negotiatedOf, negotiation } from '../negotiate/index.ts'
import { requestId, requestIdOf } from '../request-id/index.ts'
import { errorBoundaryKey, negotiationKey, requestIdKey } from './keys.ts'

describe("the package's per-request values (core's context, shared keys)", () => {
  test('requestIdOf and negotiatedOf are undefined without their middleware', () => {
    const request = new Request('https://api.example/')
    expect(requestIdOf(request)).toBeUndefined()
    expect(negotiatedOf(request)).toBeUndefined()
  })

  test('a second installed copy of the package reads what the first one stored', async () => {
    // The keys' module loaded again under another URL is a distinct module instance, as in a
    // duplicate install: its keys must still be the same, or the copies would not share values.
    const specifier = './keys.ts?copy'
    const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('./keys.ts')
    expect(copy.requestIdKey).not.toBe(requestIdKey)
    let seen: string | undefined
    const app = compose(requestId({ generate: () => 'id-1' }))(async (request) => {
      seen = getContext(request, copy.requestIdKey)
      return new Response()
    })
    await app(new Request('https://api.example/'))
    expect(seen).toBe('id-1')
    expect(copy.requestIdKey.symbol).toBe(requestIdKey.symbol)
    expect(copy.errorBoundaryKey.symbol).toBe(errorBoundaryKey.symbol)
    expect(copy.negotiationKey.symbol).toBe(negotiationKey.symbol)
  })

  test('values travel with a Request a middleware hands on', async () => {
    let seen: [string | undefined, string | undefined] = [undefined, undefined]
    const app = compose(
      requestId({ generate: () => 'id-2' }),
      negotiation({ languages: ['en', 'de'] }),
      async (request, next) => next(new Request(request, { headers: { 'x-copied': '1' } })),
    )(async (request) => {
      seen = [requestIdOf(request), negotiatedOf(request)?.language]
      return new Response()
    })
    await app(new Request('https://api.example/', { headers: { 'accept-language': 'de' } }))
    expect(seen).toEqual(['id-2', 'de'])
  })
})
