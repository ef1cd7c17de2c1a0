import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { TestServer } from '../../test/http-server.ts'
import { json, startServer } from '../../test/http-server.ts'
import { refusal } from '../../test/refusal.ts'
import type { TestKey } from '../../test/tokens.ts'
import {
  AUDIENCE,
  claims,
  ISSUER,
  makeKey,
  NOW,
  NOW_SECONDS,
  sign,
  unsecured,
} from '../../test/tokens.ts'
import type { JwtVerificationOptions } from '../options.ts'
import { JWKS_STALE_GRACE_MS } from '../options.ts'
import { createTokenVerifier } from '../verifier.ts'
import { MAX_JWKS_BYTES } from './remote-jwks.ts'

let key1: TestKey
let key2: TestKey
let server: TestServer
let published: TestKey[]
let clock: number

beforeAll(async () => {
  key1 = await makeKey('key-1')
  key2 = await makeKey('key-2')
})

beforeEach(async () => {
  published = [key1]
  clock = NOW
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
    clock: () => clock,
  })
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
    const tokens = verifier({ jwksCooldownMs: 1000 })
    await tokens.verify(await sign(key1))
    published = [key1, key2]
    clock += 999
    expect((await refusal(tokens.verify(await sign(key2)))).message).toContain('unknown key')
    expect(server.requests).toHaveLength(1)
    clock += 1
    await expect(tokens.verify(await sign(key2))).resolves.toMatchObject({ subject: 'user-1' })
    expect(server.requests).toHaveLength(2)
    // A known kid needs no fetch.
    await tokens.verify(await sign(key1))
    expect(server.requests).toHaveLength(2)
  })

  it('refetches once the cache is older than jwksCacheMaxAgeMs', async () => {
    const tokens = verifier({ jwksCacheMaxAgeMs: 60_000 })
    await tokens.verify(await sign(key1))
    clock += 59_999
    await tokens.verify(await sign(key1))
    expect(server.requests).toHaveLength(1)
    clock += 1
    await tokens.verify(await sign(key1))
    expect(server.requests).toHaveLength(2)
  })

  it('MUST NOT fetch for every made-up kid once a fetch has failed: the cooldown counts failed fetches', async () => {
    const tokens = verifier()
    await tokens.verify(await sign(key1))
    server.handler = (_request, response) => json(response, 500, { error: 'down' })
    clock += 30_000
    // The first unknown kid after the cooldown tries a fetch, which fails: 503, not a verdict.
    const first = await refusal(tokens.verify(await sign({ ...key2, kid: 'made-up' })))
    expect(first.code).toBe('JWKS_UNAVAILABLE')
    expect(server.requests).toHaveLength(2)
    for (let round = 0; round < 200; round++) {
      clock += 100
      const error = await refusal(tokens.verify(await sign({ ...key2, kid: `made-up-${round}` })))
      expect(error.code).toBe('TOKEN_INVALID')
      expect(error.message).toContain('unknown key')
    }
    // 200 tokens over 20 s: no fetch, and the known key still verifies.
    expect(server.requests).toHaveLength(2)
    await expect(tokens.verify(await sign(key1))).resolves.toMatchObject({ subject: 'user-1' })
    expect(server.requests).toHaveLength(2)
  })

  it(`keeps the last good keys for JWKS_STALE_GRACE_MS (${JWKS_STALE_GRACE_MS} ms) past their age while fetches fail`, async () => {
    const tokens = verifier({ jwksCacheMaxAgeMs: 600_000 })
    const token = await sign(key1, claims({ exp: NOW_SECONDS + 86_400 }))
    await tokens.verify(token)
    server.handler = (_request, response) => json(response, 503, {})
    clock += 600_000
    // Stale: a refetch is tried (and fails); the stale keys still verify.
    await expect(tokens.verify(token)).resolves.toMatchObject({ subject: 'user-1' })
    expect(server.requests).toHaveLength(2)
    // Within the cooldown, no second try.
    await expect(tokens.verify(token)).resolves.toMatchObject({ subject: 'user-1' })
    expect(server.requests).toHaveLength(2)
    clock = NOW + 600_000 + JWKS_STALE_GRACE_MS - 1
    await expect(tokens.verify(token)).resolves.toMatchObject({ subject: 'user-1' })
    expect(server.requests).toHaveLength(3)
    clock += 1
    // Past the grace, the keys are no longer used: 503 (within the cooldown, without a fetch).
    expect((await refusal(tokens.verify(token))).code).toBe('JWKS_UNAVAILABLE')
    expect(server.requests).toHaveLength(3)
    clock += 30_000
    expect((await refusal(tokens.verify(token))).code).toBe('JWKS_UNAVAILABLE')
    expect(server.requests).toHaveLength(4)
    // Back: fetched again at the next try after the cooldown.
    server.handler = (_request, response) => json(response, 200, { keys: [key1.publicJwk] })
    clock += 30_000
    await expect(tokens.verify(token)).resolves.toMatchObject({ subject: 'user-1' })
    expect(server.requests).toHaveLength(5)
  })

  it('verifies a token without kid against each key of its algorithm (at most five)', async () => {
    published = [key1, key2]
    const tokens = verifier()
    const withoutKid = (key: TestKey) => sign(key, undefined, { kid: undefined })
    await expect(tokens.verify(await withoutKid(key2))).resolves.toMatchObject({
      subject: 'user-1',
    })
    await expect(tokens.verify(await withoutKid(key1))).resolves.toMatchObject({
      subject: 'user-1',
    })
    const stranger = await makeKey('stranger')
    const error = await refusal(tokens.verify(await withoutKid(stranger)))
    expect(error.message).toContain('signature')
  })

  it('tries at most five keys for a token without kid', async () => {
    const others = await Promise.all([1, 2, 3, 4, 5].map((n) => makeKey(`other-${n}`)))
    published = [...others, key1]
    const tokens = verifier()
    const error = await refusal(tokens.verify(await sign(key1, undefined, { kid: undefined })))
    expect(error.message).toContain('signature')
    published = [...others.slice(1), key1]
    const fewer = verifier()
    await expect(
      fewer.verify(await sign(key1, undefined, { kid: undefined })),
    ).resolves.toMatchObject({
      subject: 'user-1',
    })
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

  it('a JWKS endpoint that answers 503, and recovery once it is back (after the cooldown)', async () => {
    const tokens = verifier()
    const token = await sign(key1)
    server.handler = (_request, response) => json(response, 503, {})
    expect((await refusal(tokens.verify(token))).code).toBe('JWKS_UNAVAILABLE')
    server.handler = (_request, response) => json(response, 200, { keys: [key1.publicJwk] })
    clock += 29_999
    expect((await refusal(tokens.verify(token))).code).toBe('JWKS_UNAVAILABLE')
    expect(server.requests).toHaveLength(1)
    clock += 1
    await expect(tokens.verify(token)).resolves.toMatchObject({ subject: 'user-1' })
    expect(server.requests).toHaveLength(2)
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
