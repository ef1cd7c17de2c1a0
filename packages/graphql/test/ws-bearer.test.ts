import type { IntrospectionResponse } from '@api-blocks/bearer'
import { createTokenVerifier } from '@api-blocks/bearer'
import { afterEach, describe, expect, test } from 'vitest'
import { bearerAuthentication } from '../src/ws/index.ts'
import type { Harness } from './ws-support.ts'
import { closeCode, collect, MemoryPubSub, makeSchema, raw, start } from './ws-support.ts'

// The token in `connection_init` (graphql-ws PROTOCOL.md, ConnectionInit), read as RFC 6750
// §2.1 reads the Authorization field and verified by @api-blocks/bearer (in-process
// introspection, RFC 7662 answers).

const AUD = 'https://api.example'
const active: Record<string, IntrospectionResponse> = {
  reader: { active: true, sub: 'ada', scope: 'read:orders', aud: AUD, token_type: 'Bearer' },
  admin: { active: true, sub: 'root', scope: 'read:orders admin', aud: AUD, token_type: 'Bearer' },
  other: {
    active: true,
    sub: 'eve',
    scope: 'admin',
    aud: 'https://elsewhere',
    token_type: 'Bearer',
  },
}
let introspectionDown = false
const verifier = createTokenVerifier({
  introspection: {
    audience: AUD,
    introspect: async (token) => {
      if (introspectionDown) throw new Error('introspection endpoint down')
      return active[token] ?? { active: false }
    },
  },
})

let harness: Harness | undefined
afterEach(async () => {
  introspectionDown = false
  await harness?.close()
  harness = undefined
})

async function whoami(params: Record<string, unknown>) {
  harness ??= await start({
    schema: makeSchema(new MemoryPubSub()),
    authenticate: bearerAuthentication(verifier),
  })
  return collect(harness.client(params), { query: '{ whoami }' })
}

describe('bearerAuthentication', () => {
  test('a valid token: the principal reaches the resolvers', async () => {
    expect((await whoami({ authorization: 'Bearer reader' })).results).toEqual([
      { data: { whoami: 'ada' } },
    ])
  })

  test('the scheme and the member name are matched without regard to case', async () => {
    expect((await whoami({ Authorization: 'bearer admin' })).results).toEqual([
      { data: { whoami: 'root' } },
    ])
  })

  const refused: [string, Record<string, unknown>][] = [
    ['no token', {}],
    ['an inactive token', { authorization: 'Bearer revoked' }],
    ['a token for another audience', { authorization: 'Bearer other' }],
    ['another scheme', { authorization: 'Basic cmVhZGVyOg==' }],
    ['no space after the scheme', { authorization: 'Bearerreader' }],
    ['a token with characters outside b64token', { authorization: 'Bearer rea der' }],
    ['a token that is not a string', { authorization: ['Bearer reader'] }],
    ['a value over 4 KiB', { authorization: `Bearer ${'a'.repeat(4097)}` }],
  ]
  for (const [name, params] of refused) {
    test(`MUST close with 4403: ${name}`, async () => {
      expect(closeCode((await whoami(params)).error)).toBe(4403)
    })
  }

  test('the verifier unavailable (503): 4500, reported, not taken for a refusal', async () => {
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      authenticate: bearerAuthentication(verifier),
    })
    introspectionDown = true
    const socket = await raw(harness.url)
    socket.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
    expect((await socket.closed).code).toBe(4500)
    expect(harness.errors).toHaveLength(1)
    expect((harness.errors[0] as { code: string }).code).toBe('INTROSPECTION_UNAVAILABLE')
  })

  test('another member name', async () => {
    harness = await start({
      schema: makeSchema(new MemoryPubSub()),
      authenticate: bearerAuthentication(verifier, { param: 'authToken' }),
    })
    expect(
      (await collect(harness.client({ authToken: 'Bearer reader' }), { query: '{ whoami }' }))
        .results,
    ).toEqual([{ data: { whoami: 'ada' } }])
  })
})
