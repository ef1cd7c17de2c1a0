import type { Handler } from '@api-blocks/core'
import { principalKey, principalOf } from '@api-blocks/core'
import { beforeAll, describe, expect, it } from 'vitest'
import type { TestKey } from '../test/tokens.ts'
import {
  AUDIENCE,
  claims,
  ISSUER,
  makeKey,
  NOW,
  NOW_SECONDS,
  sign,
  unsecured,
} from '../test/tokens.ts'
import { bearer, requireScopes } from './middleware.ts'
import type { BearerOptions } from './options.ts'

let key: TestKey
let token: string

beforeAll(async () => {
  key = await makeKey('key-1')
  token = await sign(key)
})

function jwtOptions(extra: Partial<BearerOptions> = {}): BearerOptions {
  return {
    realm: 'orders',
    jwt: { issuer: ISSUER, audience: AUDIENCE, keys: [key.publicJwk] },
    clock: () => NOW,
    ...extra,
  }
}

// The protected handler: answers who the caller is.
const whoami: Handler = async (request) =>
  Response.json({ key: principalKey(principalOf(request)!), scopes: principalOf(request)?.scopes })

function protect(options: BearerOptions, ...scopes: string[]): Handler {
  const authenticate = bearer(options)
  const scoped = scopes.length === 0 ? undefined : requireScopes(...scopes)
  return (request) =>
    authenticate(request, (inner) => (scoped === undefined ? whoami(inner) : scoped(inner, whoami)))
}

function get(authorization?: string, url = 'https://api.example.com/v1/orders'): Request {
  return new Request(url, authorization === undefined ? {} : { headers: { authorization } })
}

async function problemOf(response: Response): Promise<Record<string, unknown>> {
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  return (await response.json()) as Record<string, unknown>
}

describe('bearer() answers (RFC 6750 §3)', () => {
  it('lets a valid token through and records the principal (setPrincipal)', async () => {
    const response = await protect(jwtOptions())(get(`Bearer ${token}`))
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      key: 'sub:user-1;client:app',
      scopes: ['read:orders', 'write:orders'],
    })
  })

  it('MUST answer 401 with a challenge and no error when the request has no token (§3.1)', async () => {
    for (const request of [get(), get('Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW')]) {
      const response = await protect(jwtOptions())(request)
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="orders"')
      expect(await problemOf(response)).toMatchObject({
        type: expect.stringContaining('unauthorized'),
        status: 401,
      })
    }
  })

  it('MUST answer 401 invalid_token with error_description for an invalid or expired token', async () => {
    const expired = await sign(key, claims({ exp: NOW_SECONDS - 3600 }))
    const cases: [string, string][] = [
      [expired, 'The access token expired.'],
      [unsecured(), 'The access token is signed with an algorithm that is not accepted.'],
      ['opaque-token', 'The access token is malformed.'],
    ]
    for (const [bad, description] of cases) {
      const response = await protect(jwtOptions())(get(`Bearer ${bad}`))
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe(
        `Bearer realm="orders", error="invalid_token", error_description="${description}"`,
      )
      expect(await problemOf(response)).toMatchObject({ status: 401, detail: description })
    }
  })

  it('MUST answer 400 invalid_request for a malformed field', async () => {
    const response = await protect(jwtOptions())(get('Bearer a b'))
    expect(response.status).toBe(400)
    expect(response.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="orders", error="invalid_request", error_description="[^"]+"$/,
    )
    expect(await problemOf(response)).toMatchObject({
      status: 400,
      type: expect.stringContaining('bad-request'),
    })
  })

  it('MUST answer 400 invalid_request for duplicated Authorization fields', async () => {
    const headers = new Headers()
    headers.append('authorization', `Bearer ${token}`)
    headers.append('authorization', `Bearer ${token}`)
    const request = new Request('https://api.example.com/v1/orders', { headers })
    const response = await protect(jwtOptions())(request)
    expect(response.status).toBe(400)
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_request"')
  })

  it('MUST NOT read a token from the URI query: 400 invalid_request, even beside a good field (§2.3)', async () => {
    const handler = protect(jwtOptions())
    const inQuery = await handler(
      get(undefined, `https://api.example.com/v1/orders?access_token=${token}`),
    )
    expect(inQuery.status).toBe(400)
    expect(inQuery.headers.get('www-authenticate')).toContain('error="invalid_request"')
    const detail = (await problemOf(inQuery))['detail'] as string
    expect(detail).not.toContain(token)
    const both = await handler(
      get(`Bearer ${token}`, `https://api.example.com/v1/orders?access_token=${token}`),
    )
    expect(both.status).toBe(400)
  })

  it('MUST NOT read a token from a form body (§2.2): 401 without error, body left unread', async () => {
    const request = new Request('https://api.example.com/v1/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: token }).toString(),
    })
    const response = await protect(jwtOptions())(request)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="orders"')
    expect(request.bodyUsed).toBe(false)
  })

  it('answers 503 with Retry-After and no challenge when introspection is down, never a 500', async () => {
    const handler = protect({
      introspection: {
        introspect: async () => {
          throw new Error('connection refused')
        },
        audience: AUDIENCE,
      },
    })
    const response = await handler(get('Bearer abc'))
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('5')
    expect(response.headers.get('www-authenticate')).toBeNull()
    const problem = await problemOf(response)
    expect(JSON.stringify(problem)).not.toContain('connection refused')
  })

  it('uses the default realm "api" and the configured problem base', async () => {
    const { realm: _realm, ...options } = jwtOptions()
    const handler = protect({ ...options, problemBase: 'https://errors.example/' })
    const response = await handler(get())
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api"')
    expect((await problemOf(response))['type']).toBe('https://errors.example/unauthorized')
  })

  it('refuses a realm that cannot be quoted at construction', () => {
    expect(() => bearer({ ...jwtOptions(), realm: 'a\nb' })).toThrow(RangeError)
  })
})

describe('requireScopes()', () => {
  it('lets a token with every scope through', async () => {
    const response = await protect(
      jwtOptions(),
      'read:orders',
      'write:orders',
    )(get(`Bearer ${token}`))
    expect(response.status).toBe(200)
  })

  it('MUST answer 403 insufficient_scope with the scopes needed (§3.1)', async () => {
    const readOnly = await sign(key, claims({ scope: 'read:orders' }))
    const response = await protect(
      jwtOptions(),
      'read:orders',
      'manage:webhooks',
    )(get(`Bearer ${readOnly}`))
    expect(response.status).toBe(403)
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer realm="orders", error="insufficient_scope", error_description="The access token lacks the scope manage:webhooks.", scope="read:orders manage:webhooks"',
    )
    expect(await problemOf(response)).toMatchObject({
      type: expect.stringContaining('insufficient-scope'),
      status: 403,
      required_scopes: ['read:orders', 'manage:webhooks'],
    })
  })

  it('answers 401 when no bearer() ran before it', async () => {
    const response = await requireScopes('read:orders')(get(), whoami)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api"')
  })

  it('refuses no scope and what is no scope token, at construction', () => {
    expect(() => requireScopes()).toThrow(TypeError)
    expect(() => requireScopes('read orders')).toThrow(TypeError)
    expect(() => requireScopes('a"b')).toThrow(TypeError)
  })
})

describe('principals', () => {
  it('a client acting for itself is keyed by its client id', async () => {
    const clientToken = await sign(key, claims({ sub: 'app' }))
    const response = await protect(jwtOptions())(get(`Bearer ${clientToken}`))
    expect(await response.json()).toMatchObject({ key: 'client:app' })
  })
})
