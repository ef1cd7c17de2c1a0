/**
 * What the endpoints answer when the store, the client registry or findAccount fails: never a
 * thrown error out of a handler, never the failure's details, always an event.
 */
import { describe, expect, test } from 'vitest'
import { exchange, ISSUER, json, makeServer, obtainCode, startInteraction } from '../test/kit.ts'
import { OAuthError } from './error.ts'
import { MemoryOAuthStore } from './memory-store.ts'
import type { OAuthStore } from './store.ts'

/** A real memory store whose methods named in `failing` reject (a database that went away). */
class FailingStore extends MemoryOAuthStore {
  readonly failing = new Set<keyof OAuthStore>()
  readonly calls: string[] = []
  constructor() {
    super()
    for (const name of [
      'saveInteraction',
      'findInteraction',
      'takeInteraction',
      'saveCode',
      'consumeCode',
      'issue',
      'findToken',
      'rotateRefresh',
    ] as const) {
      const real = this[name].bind(this) as (...args: unknown[]) => Promise<unknown>
      ;(this as Record<string, unknown>)[name] = async (...args: unknown[]) => {
        this.calls.push(name)
        if (this.failing.has(name)) throw new Error(`secret database detail: ${name} failed`)
        return real(...args)
      }
    }
  }
}

async function harnessWithFailingStore() {
  const store = new FailingStore()
  const harness = await makeServer({ store })
  return { ...harness, store }
}

async function expectServerErrorPage(response: Response): Promise<void> {
  expect(response.status).toBe(500)
  expect(response.headers.get('content-type')).toMatch(/^text\/html/)
  expect(response.headers.get('location')).toBeNull()
  const html = await response.text()
  expect(html).toContain('server_error')
  expect(html).not.toContain('secret database detail')
}

describe('failures of the store and the registry', () => {
  test('/authorize: saveInteraction fails -> the 500 page and a server_error event', async () => {
    const harness = await harnessWithFailingStore()
    harness.store.failing.add('saveInteraction')
    await expect(startInteraction(harness)).rejects.toThrow('authorize answered 500')
    const response = await harness.server.authorize(
      new Request(`${ISSUER}/authorize?client_id=demo-spa`),
    )
    expect(response.status).toBe(400) // the request is refused before the store is asked
    harness.events.length = 0
    const failed = await harness.server.authorize(
      new Request(
        `${ISSUER}/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: 'demo-spa',
          redirect_uri: 'http://127.0.0.1:5173/callback',
          scope: 'read:orders',
          state: 's',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
      ),
    )
    await expectServerErrorPage(failed)
    expect(harness.events).toEqual([
      expect.objectContaining({ type: 'server_error', code: 'SERVER_ERROR' }),
    ])
  })

  test('/authorize: the client registry fails -> the 500 page', async () => {
    const harness = await makeServer({
      clients: {
        findClient: async () => {
          throw new Error('secret database detail: registry down')
        },
      },
    })
    const response = await harness.server.authorize(
      new Request(`${ISSUER}/authorize?client_id=demo-spa&redirect_uri=x`),
    )
    await expectServerErrorPage(response)
    expect(harness.events.map((event) => event.type)).toEqual(['server_error'])
  })

  test.each([['findInteraction'], ['takeInteraction'], ['saveCode']] as const)(
    'completeInteraction: %s fails -> the 500 page',
    async (method) => {
      const harness = await harnessWithFailingStore()
      const { id, page } = await startInteraction(harness)
      harness.store.failing.add(method)
      const response = await harness.server.completeInteraction(
        id,
        { subject: 'user-ada', scopes: ['openid'] },
        page,
      )
      await expectServerErrorPage(response)
      expect(harness.events.at(-1)).toMatchObject({ type: 'server_error' })
    },
  )

  test.each([['findInteraction'], ['takeInteraction']] as const)(
    'denyInteraction: %s fails -> the 500 page',
    async (method) => {
      const harness = await harnessWithFailingStore()
      const { id, page } = await startInteraction(harness)
      harness.store.failing.add(method)
      await expectServerErrorPage(await harness.server.denyInteraction(id, page))
    },
  )

  test('userinfo: findToken fails -> 500 JSON, no-store', async () => {
    const harness = await harnessWithFailingStore()
    const { code } = await obtainCode(harness, { scope: 'openid' })
    const token = (await json(await exchange(harness, code)))['access_token'] as string
    harness.store.failing.add('findToken')
    const response = await harness.server.userinfo(
      new Request(`${ISSUER}/userinfo`, { headers: { authorization: `Bearer ${token}` } }),
    )
    expect(response.status).toBe(500)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const body = await response.text()
    expect(JSON.parse(body)).toMatchObject({ error: 'server_error' })
    expect(body).not.toContain('secret database detail')
    expect(harness.events.at(-1)).toMatchObject({ type: 'server_error' })
  })

  test('introspectToken: findToken fails -> rejects with OAuthError SERVER_ERROR, after the event', async () => {
    const harness = await harnessWithFailingStore()
    const { code } = await obtainCode(harness)
    const token = (await json(await exchange(harness, code)))['access_token'] as string
    harness.store.failing.add('findToken')
    const error = await harness.server.introspectToken(token).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OAuthError)
    expect(error).toMatchObject({ code: 'SERVER_ERROR', status: 500 })
    expect(harness.events.at(-1)).toMatchObject({ type: 'server_error' })
  })

  test('the code exchange: a failing findAccount (ID token) saves no tokens nobody received', async () => {
    const store = new FailingStore()
    let fail = false
    const harness = await makeServer({
      store,
      findAccount: async (subject) => {
        if (fail) throw new Error('secret database detail: accounts down')
        return { subject }
      },
    })
    const { code } = await obtainCode(harness, { scope: 'openid' })
    fail = true
    const response = await exchange(harness, code)
    expect(response.status).toBe(500)
    expect(await json(response)).toMatchObject({ error: 'server_error' })
    // The ID token is minted before store.issue: nothing was issued.
    expect(store.calls).not.toContain('issue')
  })
})

describe('a store full of interactions', () => {
  test('/authorize answers 503 with Retry-After (an HTML page), and the grants stay', async () => {
    const store = new MemoryOAuthStore({ maxRecords: 100, maxInteractions: 2 })
    const harness = await makeServer({ store })
    const { code } = await obtainCode(harness)
    const tokens = await json(await exchange(harness, code))
    await startInteraction(harness)
    await startInteraction(harness)
    harness.events.length = 0
    const response = await harness.server.authorize(
      new Request(
        `${ISSUER}/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: 'demo-spa',
          redirect_uri: 'http://127.0.0.1:5173/callback',
          scope: 'read:orders',
          state: 's',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
      ),
    )
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/)
    expect(response.headers.get('content-type')).toMatch(/^text\/html/)
    expect(response.headers.get('set-cookie')).toBeNull()
    expect(harness.events.map((event) => event.type)).toEqual(['interaction_store_full'])
    expect((await harness.server.introspectToken(tokens['access_token'] as string)).active).toBe(
      true,
    )
  })
})
