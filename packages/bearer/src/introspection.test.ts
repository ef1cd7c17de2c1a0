import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { TestServer } from '../test/http-server.ts'
import { json, startServer } from '../test/http-server.ts'
import vectors from '../test/rfc7662-examples.json' with { type: 'json' }
import { BearerError } from './error.ts'
import { MAX_INTROSPECTION_BYTES } from './internal/introspection-request.ts'
import type { HttpIntrospectionOptions, IntrospectionResponse } from './options.ts'
import { createTokenVerifier } from './verifier.ts'

const NOW = 1_419_350_300_000 // 62 s after the RFC 7662 example's iat
let server: TestServer
let answer: IntrospectionResponse
let clock: number

beforeEach(async () => {
  answer = vectors.active
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
      ...options,
    },
    clock: () => clock,
  })
}

async function refusal(promise: Promise<unknown>): Promise<BearerError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(BearerError)
  return error as BearerError
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

  it('answers the principal of the RFC 7662 §2.2 active example, username included', async () => {
    const principal = await verifier().verify(vectors.request.token)
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
    }
    const principal = await verifier().verify('abc')
    expect(principal.subject).toBeUndefined()
    expect(principal.clientId).toBe('svc')
  })

  const refused: [string, IntrospectionResponse, string][] = [
    ['a refresh token', { ...vectors.active, token_type: 'refresh_token' }, 'not a bearer'],
    ['a DPoP-bound token', { ...vectors.active, cnf: { jkt: 'abc' } }, 'bound to a key'],
    ['another audience', { ...vectors.active, aud: 'https://other.example' }, 'audience'],
    ['no audience', (({ aud: _aud, ...rest }) => rest)(vectors.active), 'audience'],
    ['another issuer', { ...vectors.active, iss: 'https://evil.example/' }, 'issuer'],
  ]
  it.each(refused)(
    'MUST refuse %s when audience and issuer are configured',
    async (_n, body, text) => {
      answer = body
      const tokens = verifier({ audience: vectors.active.aud, issuer: vectors.active.iss })
      const error = await refusal(tokens.verify('abc'))
      expect(error.code).toBe('TOKEN_INVALID')
      expect(error.message).toContain(text)
    },
  )
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
    answer = { ...vectors.active, exp: NOW / 1000 + 5 }
    const tokens = verifier({ cache: { maxAgeSeconds: 3600 } })
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

describe('in-process introspection', () => {
  it('asks the function every time (no cache: a revocation takes effect at once)', async () => {
    const seen: string[] = []
    let active = true
    const tokens = createTokenVerifier({
      introspection: {
        introspect: async (token) => {
          seen.push(token)
          return active
            ? { active: true, sub: 'u', client_id: 'c', scope: 'a:b' }
            : { active: false }
        },
      },
    })
    await expect(tokens.verify('t1')).resolves.toMatchObject({ subject: 'u', scopes: ['a:b'] })
    active = false
    expect((await refusal(tokens.verify('t1'))).code).toBe('TOKEN_INVALID')
    expect(seen).toEqual(['t1', 't1'])
  })

  it('answers INTROSPECTION_UNAVAILABLE when the function throws or answers nonsense', async () => {
    const throwing = createTokenVerifier({
      introspection: {
        introspect: async () => {
          throw new Error('store down')
        },
      },
    })
    const error = await refusal(throwing.verify('t'))
    expect(error.code).toBe('INTROSPECTION_UNAVAILABLE')
    expect((error.cause as Error).message).toBe('store down')
    const nonsense = createTokenVerifier({
      introspection: { introspect: async () => ({}) as IntrospectionResponse },
    })
    expect((await refusal(nonsense.verify('t'))).code).toBe('INTROSPECTION_UNAVAILABLE')
  })
})

describe('with both jwt and introspection', () => {
  it('introspects a token that is not three dot-separated parts, verifies one that is as a JWT', async () => {
    const tokens = createTokenVerifier({
      jwt: {
        issuer: 'https://auth.example.com',
        audience: 'https://api.example.com',
        keys: [
          {
            kty: 'EC',
            crv: 'P-256',
            x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
            y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
          },
        ],
      },
      introspection: { introspect: async () => ({ active: true, sub: 'u', client_id: 'c' }) },
    })
    await expect(tokens.verify('familyid.secret')).resolves.toMatchObject({ subject: 'u' })
    const error = await refusal(tokens.verify('a.b.c'))
    expect(error.code).toBe('TOKEN_INVALID')
    expect(error.message).toContain('malformed')
  })
})

describe('configuration', () => {
  it.each([
    ['a non-http URL', { url: 'ftp://auth.example.com/introspect' }, TypeError],
    ['no client id', { clientId: '' }, TypeError],
    ['no client secret', { clientSecret: '' }, TypeError],
    ['a negative timeout', { timeoutMs: -1 }, RangeError],
    ['a fractional cache size', { cache: { maxEntries: 1.5 } }, RangeError],
    ['an empty audience list', { audience: [] }, TypeError],
  ] as const)('refuses %s', (_name, options, type) => {
    expect(() => verifier(options as Partial<HttpIntrospectionOptions>)).toThrow(type)
  })
})
