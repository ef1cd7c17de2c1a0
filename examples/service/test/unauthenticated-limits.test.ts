// Requests to /v1 the bearer layer refuses are charged to their address: they carry RateLimit
// fields like every other answer, and a token guesser meets 429s.
import { describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import { clientCredentialsToken } from './oauth-client.ts'

describe('/v1 without a valid token', () => {
  test('MUST be rate-limited per address: 25 bogus tokens from one address end in 429, every answer with RateLimit fields', async () => {
    const now = Date.UTC(2026, 10, 22, 10, 0, 0)
    const service = createService({
      publicUrl: 'https://api.example',
      clock: () => now,
      clientAddress: () => '192.0.2.7',
    })
    const statuses: number[] = []
    for (let i = 0; i < 25; i++) {
      const response = await service(
        new Request('https://api.example/v1/orders', {
          headers: { accept: 'application/json', authorization: `Bearer bogus-${i}` },
        }),
      )
      statuses.push(response.status)
      expect(response.headers.get('ratelimit-limit'), `request ${i}`).not.toBeNull()
      expect(response.headers.get('ratelimit-remaining'), `request ${i}`).not.toBeNull()
      if (response.status === 429) expect(response.headers.get('retry-after')).not.toBeNull()
      await response.body?.cancel()
    }
    // The default burst: 10 a second, the clock standing still.
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401))
    expect(statuses.slice(10)).toEqual(Array(15).fill(429))
    // A request without any token is charged to the same address.
    const none = await service(
      new Request('https://api.example/v1/orders', { headers: { accept: 'application/json' } }),
    )
    expect(none.status).toBe(429)
    // Another address has its own budget.
    const elsewhere = createService({ publicUrl: 'https://api.example', clock: () => now })
    const fresh = await elsewhere(
      new Request('https://api.example/v1/orders', {
        headers: { accept: 'application/json', authorization: 'Bearer bogus' },
      }),
    )
    expect(fresh.status).toBe(401)
    expect(fresh.headers.get('www-authenticate')).toMatch(/^Bearer/)
  })
})

describe('/v1 with a valid token but not the scope', () => {
  test('the 403 is charged to the principal and carries RateLimit fields', async () => {
    const now = Date.UTC(2026, 10, 22, 10, 0, 0)
    const service = createService({
      publicUrl: 'https://api.example',
      clock: () => now,
      clientAddress: () => '192.0.2.8',
      rateLimits: [{ name: 'tests', quota: 3, windowSeconds: 60 }],
    })
    const token = await clientCredentialsToken(service, 'https://api.example', 'read:orders')
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const response = await service(
        new Request('https://api.example/v1/orders', {
          method: 'POST',
          headers: {
            accept: 'application/json',
            'content-type': 'application/json',
            authorization: `Bearer ${token}`,
          },
          body: '{}',
        }),
      )
      statuses.push(response.status)
      expect(response.headers.get('ratelimit-limit')).toBe('3')
      await response.body?.cancel()
    }
    // The principal's own quota (the token request was charged to the address).
    expect(statuses).toEqual([403, 403, 403, 429])
  })
})
