// Bearer tokens on /v1 (RFC 6750), in process: what the API answers without a token, with a bad,
// revoked or expired one, with too few scopes, and with a token in the URL; the public routes;
// rate limits and Idempotency-Keys keyed by the principal the token names, not the address.
import { MemoryOAuthStore } from '@api-blocks/oauth'
import { describe, expect, test } from 'vitest'
import type { ServiceOptions } from '../src/app.ts'
import { createService } from '../src/app.ts'
import { DEMO_CLIENTS } from '../src/auth/accounts.ts'
import {
  Browser,
  basic,
  clientCredentialsToken,
  codeFlowTokens,
  DEMO_BACKEND,
  DEMO_SPA,
} from './oauth-client.ts'

const BASE = 'http://service.test'
const PUBLIC = 'https://api.example'
const order = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 1 }] }
// A second confidential client, for the tests that need two principals.
const BILLING = { id: 'billing', secret: 'billing-secret' }

async function setup(options: ServiceOptions = {}) {
  let now = Date.UTC(2026, 10, 22, 10, 0, 0)
  const service = createService({
    publicUrl: PUBLIC,
    clock: () => now,
    rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
    clientAddress: () => '192.0.2.1',
    ...options,
    oauth: {
      clients: [
        ...DEMO_CLIENTS,
        {
          id: BILLING.id,
          secretHashes: [
            Buffer.from(
              await crypto.subtle.digest('SHA-256', new TextEncoder().encode(BILLING.secret)),
            ).toString('base64url'),
          ],
          grantTypes: ['client_credentials'],
          scopes: ['read:orders', 'write:orders'],
        },
      ],
      ...options.oauth,
    },
  })
  const token = (scope?: string, client: { id: string; secret: string } = DEMO_BACKEND) =>
    clientCredentialsToken(service, BASE, scope, client)
  const call = (path: string, init: RequestInit & { token?: string } = {}) => {
    const headers = new Headers(init.headers)
    if (init.token !== undefined) headers.set('authorization', `Bearer ${init.token}`)
    return service(new Request(`${BASE}${path}`, { ...init, headers }))
  }
  const create = (bearer: string, key?: string) =>
    call('/v1/orders', {
      method: 'POST',
      token: bearer,
      headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify(order),
    })
  // A token ada approved for `client` through the login and consent pages, in process.
  const userToken = async (client: 'demo-spa' | 'demo-backend') =>
    (
      await codeFlowTokens(
        new Browser(service),
        service,
        PUBLIC,
        client === 'demo-spa'
          ? DEMO_SPA
          : { ...DEMO_BACKEND, redirectUri: 'http://127.0.0.1:8080/callback' },
        { scope: 'read:orders write:orders' },
      )
    ).access_token
  return { service, token, userToken, call, create, advance: (ms: number) => (now += ms) }
}

describe('RFC 6750 answers on /v1', () => {
  test('MUST: no token is 401 with WWW-Authenticate: Bearer and no error code (RFC 6750 §3.1)', async () => {
    const { call } = await setup()
    for (const path of ['/v1/orders', '/v1/orders/ord_1', '/v1/operations/op_1']) {
      const response = await call(path)
      expect(response.status, path).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe(`Bearer realm="${PUBLIC}"`)
      expect(response.headers.get('content-type')).toBe('application/problem+json')
    }
  })

  test('MUST: a garbage, revoked or expired token is 401 invalid_token', async () => {
    const { call, token, service, advance } = await setup()
    const refused = async (bearer: string) => {
      const response = await call('/v1/orders', { token: bearer })
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toMatch(
        new RegExp(`^Bearer realm="${PUBLIC}", error="invalid_token"`),
      )
    }
    await refused('garbage')
    await refused(`${'A'.repeat(22)}.${'B'.repeat(43)}`)
    // Revoked (RFC 7009): refused at once, the token checked in process.
    const revoked = await token()
    expect((await call('/v1/orders', { token: revoked })).status).toBe(200)
    const revocation = await service(
      new Request(`${BASE}/oauth/revoke`, {
        method: 'POST',
        headers: {
          authorization: basic(DEMO_BACKEND.id, DEMO_BACKEND.secret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token: revoked }).toString(),
      }),
    )
    expect(revocation.status).toBe(200)
    await refused(revoked)
    // Expired: access tokens live 15 minutes.
    const expiring = await token()
    advance(15 * 60 * 1000 - 1000)
    expect((await call('/v1/orders', { token: expiring })).status).toBe(200)
    advance(2000)
    await refused(expiring)
  })

  test('a malformed Authorization field is 400 invalid_request', async () => {
    const { call } = await setup()
    for (const value of ['Bearer', 'Bearer a b', `Bearer ${'a'.repeat(5000)}`]) {
      const response = await call('/v1/orders', { headers: { authorization: value } })
      expect(response.status, value.slice(0, 20)).toBe(400)
      expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_request"/)
    }
  })

  test('MUST: reads need read:orders and writes write:orders: 403 insufficient_scope with the scope needed', async () => {
    const { call, token, create } = await setup()
    const reader = await token('read:orders')
    const writer = await token('write:orders')
    expect((await call('/v1/orders', { token: reader })).status).toBe(200)
    const write = await create(reader)
    expect(write.status).toBe(403)
    expect(write.headers.get('www-authenticate')).toMatch(
      new RegExp(`^Bearer realm="${PUBLIC}", error="insufficient_scope", .*scope="write:orders"$`),
    )
    const created = await create(writer)
    expect(created.status).toBe(201)
    const path = new URL(created.headers.get('location') ?? '').pathname
    const read = await call(path, { token: writer })
    expect(read.status).toBe(403)
    expect(read.headers.get('www-authenticate')).toMatch(/scope="read:orders"/)
    for (const method of ['PATCH', 'DELETE']) {
      const response = await call(path, { method, token: reader, headers: { 'if-match': '"1"' } })
      expect(response.status, method).toBe(403)
    }
    expect((await call(`${path}/cancel`, { method: 'POST', token: reader })).status).toBe(403)
  })

  test('MUST NOT accept a token in the URL: access_token in the query is 400 invalid_request, even beside a valid header (RFC 6750 §2.3)', async () => {
    const { call, token } = await setup()
    const bearer = await token()
    const response = await call(`/v1/orders?access_token=${bearer}`)
    expect(response.status).toBe(400)
    expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_request"/)
    expect((await call(`/v1/orders?access_token=${bearer}`, { token: bearer })).status).toBe(400)
  })

  test('/, /openapi.json, discovery and the JWKS need no token', async () => {
    const { call } = await setup()
    for (const path of [
      '/',
      '/openapi.json',
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
      '/.well-known/jwks.json',
    ]) {
      const response = await call(path)
      expect(response.status, path).toBe(200)
    }
    const metadata = await (await call('/.well-known/openid-configuration')).json()
    expect(metadata.issuer).toBe(PUBLIC)
    expect(metadata.token_endpoint).toBe(`${PUBLIC}/token`)
  })
})

describe('rate limits and Idempotency-Keys are keyed by the principal, not the address', () => {
  test('two clients from one address get a quota each', async () => {
    const { call, token } = await setup({
      rateLimits: [{ name: 'burst', quota: 2, windowSeconds: 60 }],
    })
    const [a, b] = [await token(), await token(undefined, BILLING)]
    const statuses = async (bearer: string) => {
      const answers: number[] = []
      for (let i = 0; i < 3; i++) answers.push((await call('/v1/orders', { token: bearer })).status)
      return answers
    }
    expect(await statuses(a)).toEqual([200, 200, 429])
    expect(await statuses(b)).toEqual([200, 200, 429])
  })

  test('one user through two clients gets a quota per client (core principalKey: sub:<subject>;client:<id>)', async () => {
    // Every request from a new address, so the login pages' per-address quota stays out of the
    // way; the API keys on the principal, whatever the address.
    let n = 0
    const { call, userToken } = await setup({
      rateLimits: [{ name: 'burst', quota: 2, windowSeconds: 60 }],
      clientAddress: () => `198.51.100.${(n++ % 250) + 1}`,
    })
    const [spa, backend] = [await userToken('demo-spa'), await userToken('demo-backend')]
    const statuses = async (bearer: string) => {
      const answers: number[] = []
      for (let i = 0; i < 3; i++) answers.push((await call('/v1/orders', { token: bearer })).status)
      return answers
    }
    expect(await statuses(spa)).toEqual([200, 200, 429])
    // ada again, through the other client: a bucket of its own.
    expect(await statuses(backend)).toEqual([200, 200, 429])
    // A new token of the same user and client is the same principal: the same (spent) bucket.
    expect((await call('/v1/orders', { token: await userToken('demo-spa') })).status).toBe(429)
  })

  test('MUST NOT replay across clients of one user: the same Idempotency-Key from ada through two clients runs twice', async () => {
    const { userToken, create } = await setup()
    const [spa, backend] = [await userToken('demo-spa'), await userToken('demo-backend')]
    const first = await create(spa, 'ada-key')
    expect(first.status).toBe(201)
    const other = await create(backend, 'ada-key')
    expect(other.status).toBe(201)
    expect(other.headers.get('idempotent-replayed')).toBeNull()
    expect(other.headers.get('location')).not.toBe(first.headers.get('location'))
    const again = await create(await userToken('demo-spa'), 'ada-key')
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('location')).toBe(first.headers.get('location'))
  })

  test('MUST NOT replay across principals: the same Idempotency-Key from two clients runs twice, each replays its own', async () => {
    const { token, create } = await setup()
    const [a, b] = [await token(), await token(undefined, BILLING)]
    const first = await create(a, 'shared-key')
    expect(first.status).toBe(201)
    const other = await create(b, 'shared-key')
    expect(other.status).toBe(201)
    expect(other.headers.get('idempotent-replayed')).toBeNull()
    expect(other.headers.get('location')).not.toBe(first.headers.get('location'))
    const again = await create(a, 'shared-key')
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('location')).toBe(first.headers.get('location'))
    // A new token of the same client is the same principal: it replays too.
    const replay = await create(await token(), 'shared-key')
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
  })
})

// The store as it fails when its server is gone: every lookup of a token rejects.
class FailingLookups extends MemoryOAuthStore {
  failing = false
  override findToken(...args: Parameters<MemoryOAuthStore['findToken']>) {
    if (this.failing) return Promise.reject(new Error('connection refused'))
    return super.findToken(...args)
  }
}

test('MUST fail closed when the OAuth store fails: 503 with Retry-After, never 401 or a token let through; the failure logged at error', async () => {
  const store = new FailingLookups()
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = []
  const log = (level: string) => (fields: object, message: string) =>
    lines.push({ level, fields: fields as Record<string, unknown>, message })
  const { call, token } = await setup({
    oauth: { store },
    logger: { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') },
  })
  const bearer = await token()
  expect((await call('/v1/orders', { token: bearer })).status).toBe(200)
  store.failing = true
  const response = await call('/v1/orders', { token: bearer })
  expect(response.status).toBe(503)
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  const failure = lines.find((line) => line.message === 'oauth: server_error')
  expect(failure?.level).toBe('error')
  expect(failure?.fields['err']).toBeInstanceOf(Error)
  expect(JSON.stringify(lines)).not.toContain(bearer)
  store.failing = false
  expect((await call('/v1/orders', { token: bearer })).status).toBe(200)
})

describe('ACCESS_TOKEN_FORMAT=jwt', () => {
  test('access tokens are RFC 9068 JWTs (typ at+jwt, aud the API) that the API verifies with the JWKS; an expired one is refused', async () => {
    const { call, token, advance } = await setup({ oauth: { accessTokenFormat: 'jwt' } })
    const jwt = await token()
    expect(jwt.split('.')).toHaveLength(3)
    expect(JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString())).toMatchObject({
      typ: 'at+jwt',
      alg: 'ES256',
    })
    const claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString())
    expect(claims).toMatchObject({ iss: PUBLIC, aud: `${PUBLIC}/v1`, client_id: 'demo-backend' })
    expect((await call('/v1/orders', { token: jwt })).status).toBe(200)
    // A signature from another key: refused.
    const forged = `${jwt.slice(0, jwt.lastIndexOf('.'))}.${'A'.repeat(86)}`
    expect((await call('/v1/orders', { token: forged })).status).toBe(401)
    advance(16 * 60 * 1000)
    const expired = await call('/v1/orders', { token: jwt })
    expect(expired.status).toBe(401)
    expect(expired.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
  })
})
