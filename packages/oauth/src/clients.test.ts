import { describe, expect, test } from 'vitest'
import {
  type ClientConfig,
  type ClientRegistry,
  checkedRegistry,
  hashClientSecret,
  redirectUriProblem,
  staticClients,
} from './clients.ts'
import { createAuthorizationServer } from './server.ts'

describe('hashClientSecret', () => {
  test('is base64url SHA-256 (FIPS 180-2 "abc" vector)', async () => {
    expect(await hashClientSecret('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0')
  })
})

describe('staticClients', () => {
  const spa: ClientConfig = {
    id: 'spa',
    public: true,
    redirectUris: ['https://spa.example.com/cb'],
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'read:orders'],
  }

  test('finds clients by id', async () => {
    const registry = staticClients([spa])
    expect(await registry.findClient('spa')).toBe(spa)
    expect(await registry.findClient('other')).toBeUndefined()
  })

  test.each<[string, ClientConfig[]]>([
    ['an id used twice', [spa, spa]],
    ['an empty id', [{ ...spa, id: '' }]],
    ['an id over 256 characters', [{ ...spa, id: 'x'.repeat(257) }]],
    ['a secret hash that is not SHA-256 base64url', [{ ...spa, secretHashes: ['plain-secret'] }]],
    ['a relative redirect URI', [{ ...spa, redirectUris: ['/cb'] }]],
    [
      'a redirect URI with a fragment',
      [{ ...spa, redirectUris: ['https://spa.example.com/cb#x'] }],
    ],
    ['client_credentials for a public client', [{ ...spa, grantTypes: ['client_credentials'] }]],
    [
      'a public client with secrets',
      [{ ...spa, secretHashes: ['ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0'] }],
    ],
    ['a public client with an empty secret list', [{ ...spa, secretHashes: [] }]],
    [
      'an empty secret list without public: true',
      [{ ...spa, public: undefined, secretHashes: [] }],
    ],
    ['no secret without public: true', [{ ...spa, public: undefined }]],
    ['public that is not a boolean', [{ ...spa, public: 'yes' as never }]],
    ['a javascript: redirect URI', [{ ...spa, redirectUris: ['javascript:alert(1)//x.y'] }]],
    ['a data: redirect URI', [{ ...spa, redirectUris: ['data:text/html,hi'] }]],
    ['a vbscript: redirect URI', [{ ...spa, redirectUris: ['vbscript:msgbox(1)'] }]],
    ['a file: redirect URI', [{ ...spa, redirectUris: ['file:///etc/passwd'] }]],
    [
      'an http redirect URI to a non-loopback host',
      [{ ...spa, redirectUris: ['http://spa.example.com/cb'] }],
    ],
    ['a private-use scheme without a dot', [{ ...spa, redirectUris: ['myapp:/cb'] }]],
    ['the code grant without a redirect URI', [{ ...spa, redirectUris: [] }]],
    ['no grant', [{ ...spa, grantTypes: [] }]],
    ['an unknown grant', [{ ...spa, grantTypes: ['password' as never] }]],
    ['a scope outside the grammar', [{ ...spa, scopes: ['admin'] }]],
  ])('refuses %s', (_name, clients) => {
    expect(() => staticClients(clients)).toThrow(TypeError)
  })

  test.each([
    'https://spa.example.com/cb',
    'http://127.0.0.1:5173/callback',
    'http://[::1]:8080/cb',
    'http://localhost/cb',
    'com.example.app:/oauth2redirect',
  ])('accepts the redirect URI %s (RFC 8252 §7)', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined()
    expect(() => staticClients([{ ...spa, redirectUris: [uri] }])).not.toThrow()
  })
})

describe('a custom ClientRegistry', () => {
  const good: ClientConfig = {
    id: 'good',
    public: true,
    redirectUris: ['https://good.example.com/cb'],
    grantTypes: ['authorization_code'],
    scopes: ['read:orders'],
  }
  const bad: ClientConfig = { ...good, id: 'bad', redirectUris: ['javascript:alert(1)//x.y'] }
  const hostRegistry: ClientRegistry = {
    findClient: async (id) => [good, bad].find((client) => client.id === id),
  }

  test('its invalid clients are unknown, and reported', async () => {
    const problems: string[] = []
    const registry = checkedRegistry(hostRegistry, (id) => problems.push(id))
    expect(await registry.findClient('good')).toBe(good)
    expect(await registry.findClient('bad')).toBeUndefined()
    expect(problems).toEqual(['bad'])
  })

  test('/authorize MUST NOT redirect to a javascript: URI a registry returns: 400 page', async () => {
    const events: string[] = []
    const server = createAuthorizationServer({
      issuer: 'https://as.example.com',
      clients: hostRegistry,
      interactionUrl: (id) => `/login?interaction=${id}`,
      onEvent: (event) => events.push(event.type),
    })
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: 'bad',
      redirect_uri: 'javascript:alert(1)//x.y',
      scope: 'read:orders',
      state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    })
    const response = await server.authorize(
      new Request(`https://as.example.com/authorize?${query}`),
    )
    expect(response.status).toBe(400)
    expect(response.headers.get('location')).toBeNull()
    expect(response.headers.get('content-type')).toMatch(/^text\/html/)
    expect(events).toContain('client_config_invalid')
  })

  test('the token endpoint answers invalid_client for a registry client both public and with secrets', async () => {
    const secret = 'backend-secret'
    const contradictory: ClientConfig = {
      id: 'mixed',
      public: true,
      secretHashes: [await hashClientSecret(secret)],
      grantTypes: ['client_credentials'],
      scopes: ['read:orders'],
    }
    const server = createAuthorizationServer({
      issuer: 'https://as.example.com',
      clients: { findClient: async (id) => (id === 'mixed' ? contradictory : undefined) },
      interactionUrl: (id) => `/login?interaction=${id}`,
    })
    const response = await server.token(
      new Request('https://as.example.com/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `grant_type=client_credentials&client_id=mixed&client_secret=${secret}`,
      }),
    )
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ error: 'invalid_client' })
  })
})
