import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { TestServer } from '../../test/http-server.ts'
import { json, startServer } from '../../test/http-server.ts'
import type { TestKey } from '../../test/tokens.ts'
import { AUDIENCE, ISSUER, makeKey, NOW, sign, unsecured } from '../../test/tokens.ts'
import { BearerError } from '../error.ts'
import type { JwtVerificationOptions } from '../options.ts'
import { createTokenVerifier } from '../verifier.ts'
import { MAX_JWKS_BYTES } from './keys.ts'

let key1: TestKey
let key2: TestKey
let server: TestServer
let published: TestKey[]

beforeAll(async () => {
  key1 = await makeKey('key-1')
  key2 = await makeKey('key-2')
})

beforeEach(async () => {
  published = [key1]
  server = await startServer((_request, response) => {
    json(response, 200, { keys: published.map((key) => key.publicJwk) })
  })
})

afterEach(async () => {
  await server.close()
})

function verifier(jwt: Partial<JwtVerificationOptions> = {}) {
  return createTokenVerifier({
    jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: `${server.url}/jwks`, ...jwt },
    clock: () => NOW,
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

describe('keys from a JWKS URL', () => {
  it('fetches the JWKS once (GET, Accept JSON) and verifies from the cache after', async () => {
    const tokens = verifier()
    for (let round = 0; round < 5; round++) {
      await expect(tokens.verify(await sign(key1))).resolves.toMatchObject({ subject: 'user-1' })
    }
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/jwks' })
    expect(server.requests[0]?.headers.accept).toContain('application/json')
  })

  it('makes a single fetch for concurrent first requests', async () => {
    const tokens = verifier()
    const token = await sign(key1)
    const results = await Promise.all(Array.from({ length: 20 }, () => tokens.verify(token)))
    expect(results).toHaveLength(20)
    expect(server.requests).toHaveLength(1)
  })

  it('MUST NOT fetch for a token whose algorithm is not accepted', async () => {
    const error = await refusal(verifier().verify(unsecured()))
    expect(error.code).toBe('TOKEN_INVALID')
    expect(server.requests).toHaveLength(0)
  })

  it('refetches on an unknown kid at most once per cooldown: a flood of made-up kids costs nothing', async () => {
    const tokens = verifier()
    await tokens.verify(await sign(key1))
    for (let round = 0; round < 10; round++) {
      const error = await refusal(tokens.verify(await sign({ ...key2, kid: `made-up-${round}` })))
      expect(error.code).toBe('TOKEN_INVALID')
      expect(error.message).toContain('unknown key')
    }
    expect(server.requests).toHaveLength(1)
  })

  it('picks up a rotated key on its unknown kid once the cooldown has passed', async () => {
    // A cooldown of 0 has always passed; the default (30 s) is exercised above.
    const tokens = verifier({ jwksCooldownMs: 0 })
    await tokens.verify(await sign(key1))
    published = [key1, key2]
    await expect(tokens.verify(await sign(key2))).resolves.toMatchObject({ subject: 'user-1' })
    expect(server.requests).toHaveLength(2)
    // A known kid needs no fetch.
    await tokens.verify(await sign(key1))
    expect(server.requests).toHaveLength(2)
  })

  it('refetches once the cache is older than jwksCacheMaxAgeMs', async () => {
    const tokens = verifier({ jwksCacheMaxAgeMs: 0 })
    await tokens.verify(await sign(key1))
    await tokens.verify(await sign(key1))
    expect(server.requests).toHaveLength(2)
  })
})

describe('a JWKS that cannot be had answers JWKS_UNAVAILABLE (503), never a 500', () => {
  const failures: [string, TestServer['handler']][] = [
    ['a 500', (_request, response) => json(response, 500, { error: 'down' })],
    [
      'a redirect (never followed)',
      (_request, response) => {
        response.writeHead(302, { location: '/elsewhere' })
        response.end()
      },
    ],
    [
      'not JSON',
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end('<html>')
      },
    ],
    ['not a key set', (_request, response) => json(response, 200, { keys: 'none' })],
    [
      `over ${MAX_JWKS_BYTES} bytes`,
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ keys: [], padding: 'x'.repeat(MAX_JWKS_BYTES) }))
      },
    ],
  ]

  it.each(failures)('%s', async (_name, handler) => {
    server.handler = handler
    const error = await refusal(verifier().verify(await sign(key1)))
    expect(error.code).toBe('JWKS_UNAVAILABLE')
    expect(error.status).toBe(503)
    expect(error.headers).toEqual({ 'retry-after': '5' })
  })

  it('a JWKS endpoint that does not answer within jwksTimeoutMs', async () => {
    server.handler = () => {
      // Never answers; the server closes the connection after the test.
    }
    const error = await refusal(verifier({ jwksTimeoutMs: 50 }).verify(await sign(key1)))
    expect(error.code).toBe('JWKS_UNAVAILABLE')
  })

  it('a JWKS endpoint that refuses connections, and recovery once it is back', async () => {
    const tokens = verifier()
    const token = await sign(key1)
    server.handler = (_request, response) => json(response, 503, {})
    expect((await refusal(tokens.verify(token))).code).toBe('JWKS_UNAVAILABLE')
    server.handler = (_request, response) => json(response, 200, { keys: [key1.publicJwk] })
    await expect(tokens.verify(token)).resolves.toMatchObject({ subject: 'user-1' })
  })

  it('a closed port', async () => {
    const url = `${server.url}/jwks`
    await server.close()
    const tokens = createTokenVerifier({
      jwt: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: url },
      clock: () => NOW,
    })
    expect((await refusal(tokens.verify(await sign(key1)))).code).toBe('JWKS_UNAVAILABLE')
    server = await startServer((_request, response) => json(response, 200, {}))
  })
})
