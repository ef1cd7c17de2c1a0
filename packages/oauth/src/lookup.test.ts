import { describe, expect, test } from 'vitest'
import { BACKEND_SECRET, basic, json, makeServer, post } from '../test/kit.ts'
import { createContext } from './context.ts'
import { findActiveToken } from './lookup.ts'
import { MemoryOAuthStore } from './memory-store.ts'
import { resolveOptions } from './options.ts'

describe('findActiveToken', () => {
  test('an opaque token is found by its family and keyed hash; anything else answers without the store', async () => {
    const store = new MemoryOAuthStore()
    const calls: string[] = []
    const findToken = store.findToken.bind(store)
    store.findToken = async (familyId, hash, now) => {
      calls.push(familyId)
      return findToken(familyId, hash, now)
    }
    const harness = await makeServer({ store })
    const token = (
      await json(
        await harness.server.token(
          post(
            '/token',
            { grant_type: 'client_credentials' },
            { authorization: basic('demo-backend', BACKEND_SECRET) },
          ),
        ),
      )
    )['access_token'] as string
    expect((await harness.server.introspectToken(token)).active).toBe(true)
    expect(calls).toEqual([token.slice(0, 22)])
    for (const malformed of ['', 'abc', 'a.b', 'a.b.c', token.slice(1), `${token}x`]) {
      expect(await harness.server.introspectToken(malformed)).toEqual({ active: false })
    }
    expect(calls).toHaveLength(1)
  })

  test('a token of the right shape under another token key is not found', async () => {
    const options = resolveOptions({
      issuer: 'https://as.example.com',
      clients: [],
      interactionUrl: (id) => id,
    })
    const context = createContext(options, new MemoryOAuthStore())
    expect(
      await findActiveToken(context, `${'A'.repeat(22)}.${'A'.repeat(43)}`, Date.now()),
    ).toBeUndefined()
  })
})
