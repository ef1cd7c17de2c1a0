import { describe, expect, test } from 'vitest'
import {
  BACKEND_SECRET,
  basic,
  exchange,
  ISSUER,
  json,
  makeServer,
  obtainCode,
  post,
} from '../test/kit.ts'
import { hashClientSecret } from './clients.ts'
import { RFC7662_EXAMPLE } from './testing/vectors/rfc7662.ts'

async function rfcServer() {
  return makeServer({
    clients: [
      {
        id: RFC7662_EXAMPLE.clientId,
        secretHashes: [await hashClientSecret(RFC7662_EXAMPLE.clientSecret)],
        grantTypes: ['client_credentials'],
        scopes: ['read:orders'],
        // The resource server of the default resource (the issuer).
        resources: [ISSUER],
      },
      {
        id: 'demo-backend',
        secretHashes: [await hashClientSecret(BACKEND_SECRET)],
        grantTypes: ['client_credentials'],
        scopes: ['read:orders'],
      },
      {
        id: 'demo-spa',
        public: true,
        redirectUris: ['http://127.0.0.1:5173/callback'],
        grantTypes: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access', 'read:orders'],
      },
    ],
  })
}

async function clientToken(harness: Awaited<ReturnType<typeof makeServer>>): Promise<string> {
  const response = await harness.server.token(
    post(
      '/token',
      { grant_type: 'client_credentials' },
      { authorization: basic('demo-backend', BACKEND_SECRET) },
    ),
  )
  return (await json(response))['access_token'] as string
}

describe('POST /oauth/introspect (RFC 7662)', () => {
  test.each([
    ['no authentication', {}],
    ['a wrong secret', { authorization: basic(RFC7662_EXAMPLE.clientId, 'wrong') }],
  ])(
    'an unauthenticated caller (%s) MUST be refused with 401 invalid_client',
    async (_name, headers) => {
      const harness = await rfcServer()
      const token = await clientToken(harness)
      const response = await harness.server.introspect(
        post('/oauth/introspect', { token }, headers),
      )
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe(`Basic realm="${ISSUER}"`)
      expect(await json(response)).toMatchObject({ error: 'invalid_client' })
      expect(harness.events).toContainEqual(
        expect.objectContaining({ type: 'client_authentication_failed' }),
      )
    },
  )

  test('a client that is neither the token’s client nor a resource server of its audience MUST learn nothing: exactly {"active":false} (RFC 7662 §4)', async () => {
    const harness = await rfcServer()
    const { code } = await obtainCode(harness)
    const spaToken = (await json(await exchange(harness, code)))['access_token'] as string
    const response = await harness.server.introspect(
      post(
        '/oauth/introspect',
        { token: spaToken },
        { authorization: basic('demo-backend', BACKEND_SECRET) },
      ),
    )
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('{"active":false}')
    // The resource server of its audience sees it.
    const rs = await harness.server.introspect(
      post(
        '/oauth/introspect',
        { token: spaToken },
        { authorization: RFC7662_EXAMPLE.authorization },
      ),
    )
    expect(await json(rs)).toMatchObject({ active: true, client_id: 'demo-spa' })
    // The host, in process, sees it too.
    expect((await harness.server.introspectToken(spaToken)).active).toBe(true)
  })

  test('a client learns of its own tokens', async () => {
    const harness = await rfcServer()
    const token = await clientToken(harness)
    const response = await harness.server.introspect(
      post(
        '/oauth/introspect',
        { token },
        { authorization: basic('demo-backend', BACKEND_SECRET) },
      ),
    )
    expect(await json(response)).toMatchObject({ active: true, client_id: 'demo-backend' })
  })

  test('a public client cannot introspect', async () => {
    const harness = await rfcServer()
    const token = await clientToken(harness)
    const response = await harness.server.introspect(
      post('/oauth/introspect', { token, client_id: 'demo-spa' }),
    )
    expect(response.status).toBe(401)
  })

  test('expired, refresh, tampered and oversized tokens are exactly {"active":false}', async () => {
    const harness = await rfcServer()
    const { code } = await obtainCode(harness)
    const tokens = await json(await exchange(harness, code))
    const ask = async (token: string) =>
      (
        await harness.server.introspect(
          post('/oauth/introspect', { token }, { authorization: RFC7662_EXAMPLE.authorization }),
        )
      ).text()
    expect(await ask(tokens['refresh_token'] as string)).toBe('{"active":false}')
    expect(await ask('x'.repeat(5000))).toBe('{"active":false}')
    const access = tokens['access_token'] as string
    const tampered = `${access.slice(0, -1)}${access.endsWith('A') ? 'Q' : 'A'}`
    expect(await ask(tampered)).toBe('{"active":false}')
    harness.clock.advance(900_000)
    expect(await ask(tokens['access_token'] as string)).toBe('{"active":false}')
  })

  test('a missing token is invalid_request; GET is 405', async () => {
    const harness = await rfcServer()
    const missing = await harness.server.introspect(
      post('/oauth/introspect', {}, { authorization: RFC7662_EXAMPLE.authorization }),
    )
    expect(missing.status).toBe(400)
    expect(await json(missing)).toMatchObject({ error: 'invalid_request' })
    const get = await harness.server.introspect(new Request(`${ISSUER}/oauth/introspect`))
    expect(get.status).toBe(405)
  })
})
