import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { TestServer } from '../test/http-server.ts'
import { json, startServer } from '../test/http-server.ts'
import { refusal } from '../test/refusal.ts'
import vectors from '../test/rfc7662-examples.json' with { type: 'json' }
import { BearerError } from './error.ts'
import { MAX_INTROSPECTION_BYTES } from './internal/introspection-request.ts'
import type {
  HttpIntrospectionOptions,
  InProcessIntrospectionOptions,
  IntrospectionResponse,
} from './options.ts'
import { createTokenVerifier } from './verifier.ts'

const NOW = 1_419_350_300_000 // 62 s after the RFC 7662 example's iat
let server: TestServer
// The RFC 7662 §2.2 example with the token_type an authorisation server such as
// @api-blocks/oauth answers (the example has none: see requireTokenType).
const active: IntrospectionResponse = { ...vectors.active, token_type: 'Bearer' }
let answer: IntrospectionResponse
let clock: number

beforeEach(async () => {
  answer = active
  clock = NOW
  server = await startServer((_request, response) => json(response, 200, answer))
})

afterEach(async () => {
  await server.close()
})

function verifier(options: Partial<HttpIntrospectionOptions> = {}) {
  return createTokenVerifier({
    introspection: {
      url: `${server.url}/oauth/introspect`,
      clientId: vectors.request.clientId,
      clientSecret: vectors.request.clientSecret,
      audience: vectors.active.aud,
      ...options,
    } as HttpIntrospectionOptions,
    clock: () => clock,
  })
}

describe('introspection over HTTP (RFC 7662)', () => {
  it('sends the RFC 7662 §2.1 request: POST, Basic credentials, the token as a form, Accept JSON', async () => {
    await verifier().verify(vectors.request.token)
    expect(server.requests).toHaveLength(1)
    const request = server.requests[0]!
    expect(request.method).toBe('POST')
    expect(request.url).toBe('/oauth/introspect')
    expect(request.headers.authorization).toBe(vectors.request.authorization)
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(request.headers.accept).toBe('application/json')
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      token: vectors.request.token,
      token_type_hint: 'access_token',
    })
  })

  it('MUST form-url-encode the client id and secret before Basic (RFC 6749 §2.3.1)', async () => {
    await verifier({ clientId: 'rs:one é', clientSecret: 'p@ss:w+rd %' }).verify('abc')
    const basic = server.requests[0]!.headers.authorization!.slice('Basic '.length)
    const pair = Buffer.from(basic, 'base64').toString('utf8')
    expect(pair).toBe('rs%3Aone+%C3%A9:p%40ss%3Aw%2Brd+%25')
  })

  it('answers the principal of the RFC 7662 §2.2 active example (no token_type: requireTokenType false)', async () => {
    answer = vectors.active
    const principal = await verifier({ requireTokenType: false }).verify(vectors.request.token)
    const { active: _active, ...members } = vectors.active
    expect(principal).toEqual({
      subject: 'Z5O3upPC88QrAjx00dis',
      clientId: 'l238j323ds-23ij4',
      scopes: ['read', 'write', 'dolphin'],
      claims: members,
      tokenId: undefined,
    })
  })

  it('MUST refuse the RFC 7662 §2.2 inactive example as invalid_token', async () => {
    answer = vectors.inactive
    const error = await refusal(verifier().verify(vectors.request.token))
    expect(error.code).toBe('TOKEN_INVALID')
    expect(error.challengeError).toBe('invalid_token')
    expect(error.message).toBe('The access token is not active.')
  })

  it('has no subject for a client acting for itself (sub = client_id, no username)', async () => {
    answer = {
      active: true,
      client_id: 'svc',
      sub: 'svc',
      scope: 'read:orders',
      exp: 1_419_356_238,
      aud: vectors.active.aud,
      token_type: 'Bearer',
    }
    const principal = await verifier().verify('abc')
    expect(principal.subject).toBeUndefined()
    expect(principal.clientId).toBe('svc')
  })

  const without = (name: string): IntrospectionResponse =>
    Object.fromEntries(
      Object.entries(active).filter(([key]) => key !== name),
    ) as IntrospectionResponse
  const seconds = NOW / 1000
  const refused: [string, IntrospectionResponse, string][] = [
    ['a refresh token (token_type)', { ...active, token_type: 'refresh_token' }, 'not a bearer'],
    ['a refresh token (token_use)', { ...active, token_use: 'refresh_token' }, 'not a bearer'],
    ['an answer without token_type (requireTokenType)', without('token_type'), 'not a bearer'],
    ['a DPoP-bound token', { ...active, cnf: { jkt: 'abc' } }, 'bound to a key'],
    ['another audience', { ...active, aud: 'https://other.example' }, 'audience'],
    [
      'an audience list without ours',
      { ...active, aud: ['https://a.example', 'https://b.example'] },
      'audience',
    ],
    ['no audience', without('aud'), 'audience'],
    ['another issuer', { ...active, iss: 'https://evil.example/' }, 'issuer'],
    ['a user token without sub', without('sub'), 'no sub'],
    ['an empty sub', { ...active, sub: '' }, 'no sub'],
    ['an exp past beyond the tolerance', { ...active, exp: seconds - 30 }, 'expired'],
    ['an nbf ahead beyond the tolerance', { ...active, nbf: seconds + 31 }, 'not valid yet'],
  ]
  it.each(refused)('MUST refuse %s', async (_n, body, text) => {
    answer = body
    const tokens = verifier({ issuer: vectors.active.iss })
    const error = await refusal(tokens.verify('abc'))
    expect(error.status).toBe(401)
    expect(error.challengeError).toBe('invalid_token')
    expect(error.message).toContain(text)
  })

  it('accepts token_type in any case, token_use access_token, and an audience list with ours', async () => {
    answer = {
      ...active,
      token_type: 'BEARER',
      token_use: 'access_token',
      aud: ['https://a.example', vectors.active.aud],
    }
    await expect(verifier().verify('abc')).resolves.toMatchObject({
      subject: 'Z5O3upPC88QrAjx00dis',
    })
  })

  it('with requireTokenType false, accepts no token_type but still refuses another', async () => {
    const lenient = verifier({ requireTokenType: false })
    answer = without('token_type')
    await expect(lenient.verify('abc')).resolves.toMatchObject({ clientId: 'l238j323ds-23ij4' })
    answer = { ...active, token_type: 'refresh_token' }
    expect((await refusal(lenient.verify('abd'))).message).toContain('not a bearer')
  })

  it('SHOULD allow the clock tolerance on exp and nbf (default 30 s), like the JWT path', async () => {
    answer = { ...active, exp: seconds - 29, nbf: seconds + 30 }
    await expect(verifier().verify('abc')).resolves.toMatchObject({ clientId: 'l238j323ds-23ij4' })
    answer = { ...active, exp: seconds }
    const error = await refusal(verifier({ clockToleranceSeconds: 0 }).verify('abc'))
    expect(error.code).toBe('TOKEN_EXPIRED')
  })

  it('accepts any audience with audience: false (the unsafe opt-out)', async () => {
    answer = without('aud')
    await expect(verifier({ audience: false }).verify('abc')).resolves.toMatchObject({
      clientId: 'l238j323ds-23ij4',
    })
  })
})

describe('the cache of active answers', () => {
  it('answers a token from the cache within maxAgeSeconds, then asks again', async () => {
    const tokens = verifier({ cache: { maxAgeSeconds: 60 } })
    await tokens.verify('abc')
    clock += 59_999
    await tokens.verify('abc')
    expect(server.requests).toHaveLength(1)
    clock += 1
    await tokens.verify('abc')
    expect(server.requests).toHaveLength(2)
  })

  it("MUST NOT keep an answer past the token's exp", async () => {
    answer = { ...active, exp: NOW / 1000 + 5 }
    const tokens = verifier({ cache: { maxAgeSeconds: 300 } })
    await tokens.verify('abc')
    clock += 4999
    await tokens.verify('abc')
    expect(server.requests).toHaveLength(1)
    clock += 1
    answer = vectors.inactive
    expect((await refusal(tokens.verify('abc'))).code).toBe('TOKEN_INVALID')
    expect(server.requests).toHaveLength(2)
  })

  it('does not cache inactive answers', async () => {
    answer = vectors.inactive
    const tokens = verifier()
    await refusal(tokens.verify('abc'))
    await refusal(tokens.verify('abc'))
    expect(server.requests).toHaveLength(2)
  })

  it('holds at most maxEntries, evicting the least recently used', async () => {
    const tokens = verifier({ cache: { maxEntries: 2 } })
    await tokens.verify('a')
    await tokens.verify('b')
    await tokens.verify('a') // a is now the most recent
    await tokens.verify('c') // evicts b
    expect(server.requests).toHaveLength(3)
    await tokens.verify('a')
    await tokens.verify('c')
    expect(server.requests).toHaveLength(3)
    await tokens.verify('b')
    expect(server.requests).toHaveLength(4)
  })

  it('hands out a frozen principal, so no request can change what the next one sees', async () => {
    const tokens = verifier()
    const first = await tokens.verify('abc')
    expect(Object.isFrozen(first)).toBe(true)
    expect(Object.isFrozen(first.scopes)).toBe(true)
    expect(Object.isFrozen(first.claims)).toBe(true)
    expect(() => (first.scopes as string[]).push('admin:all')).toThrow(TypeError)
    expect((await tokens.verify('abc')).scopes).toEqual(['read', 'write', 'dolphin'])
  })

  it('deep-freezes nested claims: a request cannot change them for the next one', async () => {
    answer = { ...active, realm_access: { roles: ['reader'] }, groups: [{ name: 'staff' }] }
    const tokens = verifier()
    const first = await tokens.verify('abc')
    const roles = (first.claims['realm_access'] as { roles: string[] }).roles
    expect(Object.isFrozen(roles)).toBe(true)
    expect(() => roles.push('admin')).toThrow(TypeError)
    const group = (first.claims['groups'] as { name: string }[])[0]!
    expect(() => {
      group.name = 'admins'
    }).toThrow(TypeError)
    const again = await tokens.verify('abc')
    expect(server.requests).toHaveLength(1)
    expect(again.claims['realm_access']).toEqual({ roles: ['reader'] })
    expect(again.claims['groups']).toEqual([{ name: 'staff' }])
    expect((await tokens.verify('abc')).scopes).toEqual(['read', 'write', 'dolphin'])
  })

  it('is off with maxEntries 0', async () => {
    const tokens = verifier({ cache: { maxEntries: 0 } })
    await tokens.verify('abc')
    await tokens.verify('abc')
    expect(server.requests).toHaveLength(2)
  })

  it('shares one introspection request among concurrent requests with the same token', async () => {
    const tokens = verifier()
    await Promise.all(Array.from({ length: 10 }, () => tokens.verify('abc')))
    expect(server.requests).toHaveLength(1)
  })
})

describe('an introspection endpoint that fails answers INTROSPECTION_UNAVAILABLE (503)', () => {
  const failures: [string, TestServer['handler']][] = [
    ['a 500', (_request, response) => json(response, 500, { error: 'server_error' })],
    [
      'a 401 (our credentials refused)',
      (_request, response) => json(response, 401, { error: 'invalid_client' }),
    ],
    [
      'a redirect (never followed with credentials)',
      (_request, response) => {
        response.writeHead(307, { location: '/elsewhere' })
        response.end()
      },
    ],
    [
      'not JSON',
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' })
        response.end('<html>')
      },
    ],
    [
      'broken JSON',
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end('{"active":')
      },
    ],
    ['a JSON array', (_request, response) => json(response, 200, [{ active: true }])],
    ['no boolean active', (_request, response) => json(response, 200, { active: 'true' })],
    [
      'a scope that is no string',
      (_request, response) => json(response, 200, { active: true, scope: 1 }),
    ],
    [
      'an exp that is no number',
      (_request, response) => json(response, 200, { active: true, exp: '1' }),
    ],
    [
      `over ${MAX_INTROSPECTION_BYTES} bytes`,
      (_request, response) =>
        json(response, 200, { active: true, pad: 'x'.repeat(MAX_INTROSPECTION_BYTES) }),
    ],
  ]

  it.each(failures)('%s', async (_name, handler) => {
    server.handler = handler
    const error = await refusal(verifier().verify('abc'))
    expect(error.code).toBe('INTROSPECTION_UNAVAILABLE')
    expect(error.status).toBe(503)
    expect(error.challengeError).toBeUndefined()
  })

  it('an endpoint that does not answer within timeoutMs', async () => {
    server.handler = () => {
      // Never answers; the server closes the connection after the test.
    }
    const error = await refusal(verifier({ timeoutMs: 50 }).verify('abc'))
    expect(error.code).toBe('INTROSPECTION_UNAVAILABLE')
    expect(error.message).toContain('in time')
  })

  it('a closed port', async () => {
    const url = `${server.url}/oauth/introspect`
    await server.close()
    const error = await refusal(verifier({ url }).verify('abc'))
    expect(error.code).toBe('INTROSPECTION_UNAVAILABLE')
    server = await startServer((_request, response) => json(response, 200, {}))
  })
})

const AUD = 'https://api.example.com'
const userAnswer = (extra: Record<string, unknown> = {}): IntrospectionResponse => ({
  active: true,
  sub: 'u',
  client_id: 'c',
  scope: 'a:b',
  aud: AUD,
  token_type: 'Bearer',
  ...extra,
})

describe('in-process introspection', () => {
  it('asks the function every time (no cache: a revocation takes effect at once)', async () => {
    const seen: string[] = []
    let active = true
    const tokens = createTokenVerifier({
      introspection: {
        introspect: async (token) => {
          seen.push(token)
          return active ? userAnswer() : { active: false }
        },
        audience: AUD,
      },
    })
    await expect(tokens.verify('t1')).resolves.toMatchObject({ subject: 'u', scopes: ['a:b'] })
    active = false
    expect((await refusal(tokens.verify('t1'))).code).toBe('TOKEN_INVALID')
    expect(seen).toEqual(['t1', 't1'])
  })

  it('MUST refuse a token of another audience, a refresh token, a token without sub, an expired one', async () => {
    let answer = userAnswer()
    const tokens = createTokenVerifier({
      introspection: { introspect: async () => answer, audience: AUD },
      clock: () => NOW,
    })
    const cases: [IntrospectionResponse, string][] = [
      [userAnswer({ aud: 'https://other.example' }), 'audience'],
      [userAnswer({ token_use: 'refresh_token' }), 'not a bearer'],
      [userAnswer({ token_type: undefined }), 'not a bearer'],
      [userAnswer({ sub: undefined, username: 'jdoe' }), 'no sub'],
      [userAnswer({ exp: NOW / 1000 - 31 }), 'expired'],
    ]
    for (const [body, text] of cases) {
      answer = JSON.parse(JSON.stringify(body)) as IntrospectionResponse
      expect((await refusal(tokens.verify('t'))).message).toContain(text)
    }
  })

  it('answers INTROSPECTION_UNAVAILABLE when the function throws or answers nonsense', async () => {
    const throwing = createTokenVerifier({
      introspection: {
        introspect: async () => {
          throw new Error('store down')
        },
        audience: AUD,
      },
    })
    const error = await refusal(throwing.verify('t'))
    expect(error.code).toBe('INTROSPECTION_UNAVAILABLE')
    expect((error.cause as Error).message).toBe('store down')
    const nonsense = createTokenVerifier({
      introspection: { introspect: async () => ({}) as IntrospectionResponse, audience: AUD },
    })
    expect((await refusal(nonsense.verify('t'))).code).toBe('INTROSPECTION_UNAVAILABLE')
    const uncopyable = createTokenVerifier({
      introspection: { introspect: async () => userAnswer({ extra: () => 1 }), audience: AUD },
    })
    expect((await refusal(uncopyable.verify('t'))).code).toBe('INTROSPECTION_UNAVAILABLE')
  })
})

describe('with both jwt and introspection', () => {
  function both() {
    const seen: string[] = []
    const tokens = createTokenVerifier({
      jwt: {
        issuer: 'https://auth.example.com',
        audience: AUD,
        keys: [
          {
            kty: 'EC',
            crv: 'P-256',
            x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
            y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
          },
        ],
      },
      introspection: {
        introspect: async (token) => {
          seen.push(token)
          return userAnswer()
        },
        audience: AUD,
      },
    })
    return { tokens, seen }
  }

  it('introspects an opaque token, the RFC 6750 §2.1 example mF_9.B5f-4.1JqM (three parts, no JWS) included', async () => {
    const { tokens, seen } = both()
    await expect(tokens.verify('familyid.secret')).resolves.toMatchObject({ subject: 'u' })
    await expect(tokens.verify(vectors.request.token)).resolves.toMatchObject({ subject: 'u' })
    await expect(tokens.verify('a.b.c')).resolves.toMatchObject({ subject: 'u' })
    expect(seen).toEqual(['familyid.secret', vectors.request.token, 'a.b.c'])
  })

  it('verifies as a JWT a token whose first part is a JSON object with a string alg', async () => {
    const { tokens, seen } = both()
    const header = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const error = await refusal(
      tokens.verify(`${header({ alg: 'ES256', typ: 'at+jwt' })}.e30.c2ln`),
    )
    expect(error.code).toBe('TOKEN_INVALID')
    expect(error.message).toContain('signature')
    // A header without a string alg, or a JSON array, is no JWS: introspected.
    await tokens.verify(`${header({ alg: 1 })}.e30.c2ln`)
    await tokens.verify(`${header(['alg'])}.e30.c2ln`)
    expect(seen).toHaveLength(2)
  })
})

describe('routing between jwt and introspection (property)', () => {
  it('never throws anything but a BearerError, whatever the token', async () => {
    const tokens = createTokenVerifier({
      jwt: {
        issuer: 'https://auth.example.com',
        audience: AUD,
        keys: [
          {
            kty: 'EC',
            crv: 'P-256',
            x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
            y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
          },
        ],
      },
      introspection: { introspect: async () => ({ active: false }), audience: AUD },
    })
    const part = fc.oneof(
      fc.string({ unit: fc.constantFrom(...'AZaz09-_+/=~.'), maxLength: 40 }),
      fc.json().map((text) => Buffer.from(text).toString('base64url')),
      fc
        .record({ alg: fc.oneof(fc.string(), fc.integer()) }, { requiredKeys: [] })
        .map((header) => Buffer.from(JSON.stringify(header)).toString('base64url')),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(part, { minLength: 1, maxLength: 4 }), async (parts) => {
        const error = await tokens.verify(parts.join('.')).then(
          () => undefined,
          (caught: unknown) => caught,
        )
        expect(error).toBeInstanceOf(BearerError)
        expect((error as BearerError).code).toBe('TOKEN_INVALID')
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('configuration', () => {
  it.each([
    ['a non-http URL', { url: 'ftp://auth.example.com/introspect' }, TypeError],
    [
      'an http URL on a host that is not loopback',
      { url: 'http://auth.example.com/introspect' },
      TypeError,
    ],
    ['an http URL on 10.0.0.1', { url: 'http://10.0.0.1/introspect' }, TypeError],
    ['no client id', { clientId: '' }, TypeError],
    ['no client secret', { clientSecret: '' }, TypeError],
    ['a negative timeout', { timeoutMs: -1 }, RangeError],
    ['a timeout of 0', { timeoutMs: 0 }, RangeError],
    ['a fractional cache size', { cache: { maxEntries: 1.5 } }, RangeError],
    ['a cache age over 300 s', { cache: { maxAgeSeconds: 301 } }, RangeError],
    ['an empty audience list', { audience: [] }, TypeError],
    ['no audience', { audience: undefined }, TypeError],
    ['a huge clock tolerance', { clockToleranceSeconds: 301 }, RangeError],
  ] as const)('refuses %s', (_name, options, type) => {
    expect(() => verifier(options as Partial<HttpIntrospectionOptions>)).toThrow(type)
  })

  it('accepts http: on loopback hosts, and elsewhere only with allowInsecureHttp', () => {
    for (const url of ['http://localhost:8080/i', 'http://127.0.0.2/i', 'http://[::1]:9/i']) {
      expect(() => verifier({ url })).not.toThrow()
    }
    expect(() => verifier({ url: 'http://auth.internal/i', allowInsecureHttp: true })).not.toThrow()
  })

  it('requires an audience for in-process introspection too', () => {
    const introspect = async (): Promise<IntrospectionResponse> => ({ active: false })
    expect(() =>
      createTokenVerifier({
        introspection: { introspect } as unknown as InProcessIntrospectionOptions,
      }),
    ).toThrow(/audience is required/)
  })
})
