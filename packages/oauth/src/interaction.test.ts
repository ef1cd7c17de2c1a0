import { describe, expect, test } from 'vitest'
import { authorizeQuery, authorizeRequest, ISSUER, makeServer, SPA_REDIRECT } from '../test/kit.ts'

async function begin(harness: Awaited<ReturnType<typeof makeServer>>, changes = {}) {
  const response = await harness.server.authorize(authorizeRequest(authorizeQuery(changes)))
  expect(response.status).toBe(303)
  expect(response.headers.get('cache-control')).toBe('no-store')
  const location = new URL(response.headers.get('location')!)
  expect(location.origin + location.pathname).toBe(`${ISSUER}/login`)
  return location.searchParams.get('interaction')!
}

describe('the interaction hand-off', () => {
  test('interaction() shows the client, the scopes asked and the resource', async () => {
    const harness = await makeServer()
    const id = await begin(harness)
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(await harness.server.interaction(id)).toEqual({
      id,
      client: { id: 'demo-spa', name: 'Demo SPA' },
      scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders'],
      resource: ISSUER,
      expiresAt: harness.clock.now + 600_000,
    })
  })

  test('completes once: a second completion gets the error page', async () => {
    const harness = await makeServer()
    const id = await begin(harness)
    const first = await harness.server.completeInteraction(id, {
      subject: 'user-ada',
      scopes: ['openid'],
    })
    expect(first.status).toBe(303)
    const location = new URL(first.headers.get('location')!)
    expect(location.origin + location.pathname).toBe(SPA_REDIRECT)
    expect([...location.searchParams.keys()].sort()).toEqual(['code', 'iss', 'state'])
    const second = await harness.server.completeInteraction(id, {
      subject: 'user-ada',
      scopes: ['openid'],
    })
    expect(second.status).toBe(400)
    expect(second.headers.get('location')).toBeNull()
    expect(await harness.server.interaction(id)).toBeUndefined()
  })

  test('concurrent completions: exactly one code', async () => {
    const harness = await makeServer()
    const id = await begin(harness)
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        harness.server.completeInteraction(id, { subject: 'user-ada', scopes: [] }),
      ),
    )
    expect(results.filter((response) => response.status === 303)).toHaveLength(1)
  })

  test('approving a scope that was not asked is the host bug: TypeError, and the interaction survives', async () => {
    const harness = await makeServer()
    const id = await begin(harness)
    await expect(
      harness.server.completeInteraction(id, { subject: 'user-ada', scopes: ['write:orders'] }),
    ).rejects.toThrow(TypeError)
    await expect(
      harness.server.completeInteraction(id, { subject: '', scopes: [] }),
    ).rejects.toThrow(TypeError)
    expect(await harness.server.interaction(id)).toBeDefined()
  })

  test('expires after 10 minutes by default', async () => {
    const harness = await makeServer()
    const id = await begin(harness)
    harness.clock.advance(600_000)
    expect(await harness.server.interaction(id)).toBeUndefined()
    expect(
      (await harness.server.completeInteraction(id, { subject: 'u', scopes: [] })).status,
    ).toBe(400)
  })

  test('denyInteraction: access_denied with state and iss, once', async () => {
    const harness = await makeServer()
    const id = await begin(harness)
    const response = await harness.server.denyInteraction(id)
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get('location')!)
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied',
      error_description: expect.any(String),
      state: 'state-123',
      iss: ISSUER,
    })
    expect((await harness.server.denyInteraction(id)).status).toBe(400)
    expect(harness.events).toContainEqual({
      type: 'authorization_denied',
      code: 'ACCESS_DENIED',
      clientId: 'demo-spa',
    })
  })

  test('unknown and malformed ids', async () => {
    const harness = await makeServer()
    expect(await harness.server.interaction('nope')).toBeUndefined()
    expect(await harness.server.interaction('A'.repeat(22))).toBeUndefined()
    expect((await harness.server.denyInteraction('<script>')).status).toBe(400)
  })
})
