import { describe, expect, test } from 'vitest'
import {
  authorizeQuery,
  authorizeRequest,
  ISSUER,
  makeServer,
  SPA_REDIRECT,
  startInteraction,
} from '../test/kit.ts'

describe('GET /authorize', () => {
  test('the error page escapes what the request carried', async () => {
    const { server } = await makeServer()
    const response = await server.authorize(
      authorizeRequest(authorizeQuery({ client_id: '<script>alert(1)</script>' })),
    )
    expect(response.status).toBe(400)
    const html = await response.text()
    expect(html).not.toContain('<script>')
    expect(html).toContain('<html lang="en">')
    expect(html).toContain('<title>')
  })

  test('POST with a form works like GET (OpenID Connect Core §3.1.2.1)', async () => {
    const { server } = await makeServer()
    const response = await server.authorize(
      new Request(`${ISSUER}/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: authorizeQuery().toString(),
      }),
    )
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toContain('/login?interaction=')
    const json = await server.authorize(
      new Request(`${ISSUER}/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }),
    )
    expect(json.status).toBe(400)
    expect(json.headers.get('location')).toBeNull()
  })

  test('a query over 8 KiB is refused with a page (414)', async () => {
    const { server } = await makeServer()
    const response = await server.authorize(
      authorizeRequest(authorizeQuery({ state: 'x'.repeat(9000) })),
    )
    expect(response.status).toBe(414)
  })

  test('a client without the code grant: unauthorized_client', async () => {
    const { server } = await makeServer({
      clients: [
        {
          id: 'cc',
          secretHashes: ['ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0'],
          redirectUris: ['https://cc.example.com/cb'],
          grantTypes: ['client_credentials'],
          scopes: ['read:orders'],
        },
      ],
    })
    const response = await server.authorize(
      authorizeRequest(
        authorizeQuery({
          client_id: 'cc',
          redirect_uri: 'https://cc.example.com/cb',
          scope: 'read:orders',
          nonce: undefined,
        }),
      ),
    )
    expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe(
      'unauthorized_client',
    )
  })

  test('a registered redirect URI with a query keeps it, and the answer is added', async () => {
    const { server } = await makeServer({
      clients: [
        {
          id: 'q',
          public: true,
          redirectUris: ['https://q.example.com/cb?tenant=1'],
          grantTypes: ['authorization_code'],
          scopes: ['read:orders'],
        },
      ],
    })
    const response = await server.authorize(
      authorizeRequest(
        authorizeQuery({
          client_id: 'q',
          redirect_uri: 'https://q.example.com/cb?tenant=1',
          scope: 'write:orders',
          nonce: undefined,
        }),
      ),
    )
    const location = new URL(response.headers.get('location')!)
    expect(location.searchParams.get('tenant')).toBe('1')
    expect(location.searchParams.get('error')).toBe('invalid_scope')
    expect(location.searchParams.get('iss')).toBe(ISSUER)
  })

  test('the resource parameter selects a configured resource (RFC 8707)', async () => {
    const harness = await makeServer({
      resources: [
        { identifier: 'https://a.example.com/' },
        { identifier: 'https://b.example.com/' },
      ],
    })
    const { id, page } = await startInteraction(harness, { resource: 'https://b.example.com/' })
    expect((await harness.server.interaction(id, page))?.resource).toBe('https://b.example.com/')
  })

  describe('state, nonce and login_hint a store can hold', () => {
    const answer = async (overrides: Record<string, string | undefined>) => {
      const { server } = await makeServer()
      const response = await server.authorize(authorizeRequest(authorizeQuery(overrides)))
      expect(response.status).toBe(303)
      return new URL(response.headers.get('location')!)
    }

    test('a state outside VSCHAR (RFC 6749 Appendix A.5) MUST be refused with invalid_request, and is not echoed', async () => {
      for (const state of [
        'a\u0000b',
        'tab\there',
        'line\nbreak',
        'caf\u00e9',
        '\u{1f389}',
        'del\u007f',
      ]) {
        const location = await answer({ state })
        expect(`${location.origin}${location.pathname}`).toBe(SPA_REDIRECT)
        expect(location.searchParams.get('error')).toBe('invalid_request')
        expect(location.searchParams.get('error_description')).toContain('state')
        expect(location.searchParams.has('state')).toBe(false)
      }
    })

    test('a state of every VSCHAR is accepted', async () => {
      const vschar = Array.from({ length: 0x5f }, (_, i) => String.fromCharCode(0x20 + i)).join('')
      const location = await answer({ state: vschar })
      expect(location.searchParams.get('error')).toBeNull()
      expect(location.href).toContain(`${ISSUER}/login?interaction=`)
    })

    test('a nonce outside VSCHAR is refused with invalid_request, the valid state echoed', async () => {
      const location = await answer({ state: 'xyz', nonce: 'n\u0000once' })
      expect(location.searchParams.get('error')).toBe('invalid_request')
      expect(location.searchParams.get('error_description')).toContain('nonce')
      expect(location.searchParams.get('state')).toBe('xyz')
    })

    test('a login_hint with a control character is refused; one with non-ASCII text is accepted', async () => {
      const refused = await answer({ login_hint: 'ada\u0000@example.com' })
      expect(refused.searchParams.get('error')).toBe('invalid_request')
      const accepted = await answer({ login_hint: 'José "Pepe" <josé@example.com>' })
      expect(accepted.searchParams.get('error')).toBeNull()
    })
  })
})
