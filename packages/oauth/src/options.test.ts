import { describe, expect, test } from 'vitest'
import { generateSigningKey } from './keys.ts'
import { endpointUrl, resolveOptions } from './options.ts'

const base = { issuer: 'https://as.example.com', clients: [], interactionUrl: (id: string) => id }

describe('resolveOptions', () => {
  test('the defaults', () => {
    const resolved = resolveOptions(base)
    expect(resolved.ttl).toEqual({
      code: 60,
      accessToken: 900,
      refreshToken: 14 * 86_400,
      idToken: 3600,
      interaction: 600,
    })
    expect(resolved.resources).toEqual([
      {
        identifier: 'https://as.example.com',
        accessTokenFormat: 'opaque',
        accessTokenTtlSeconds: 900,
      },
    ])
    expect(resolved.refreshReuseGraceMs).toBe(0)
    expect(resolved.maxFormBytes).toBe(16 * 1024)
    expect(resolved.paths).toEqual({
      authorize: '/authorize',
      token: '/token',
      introspect: '/oauth/introspect',
      revoke: '/oauth/revoke',
      jwks: '/.well-known/jwks.json',
      userinfo: '/userinfo',
    })
    expect(resolved.signingAlgorithms).toEqual(['ES256'])
    expect(resolved.scopesSupported).toEqual([])
    expect(resolved.random(16).byteLength).toBe(16)
  })

  test('a resource inherits the access token TTL; the algorithms come from the keys', async () => {
    const resolved = resolveOptions({
      ...base,
      ttl: { accessToken: 600 },
      resources: [
        { identifier: 'https://api.example.com/' },
        { identifier: 'https://b.example.com/', accessTokenTtlSeconds: 300 },
      ],
      signingKeys: [
        await generateSigningKey({ kid: 'a', alg: 'RS256' }),
        await generateSigningKey({ kid: 'b' }),
      ],
    })
    expect(resolved.resources.map((r) => r.accessTokenTtlSeconds)).toEqual([600, 300])
    expect(resolved.signingAlgorithms).toEqual(['RS256', 'ES256'])
  })

  test('onEvent: an observer that throws changes nothing', () => {
    const resolved = resolveOptions({
      ...base,
      onEvent: () => {
        throw new Error('observer bug')
      },
    })
    expect(() => resolved.onEvent({ type: 'token_issued' })).not.toThrow()
  })

  test('endpointUrl joins without doubling the slash', () => {
    expect(endpointUrl('https://as.example.com', '/token')).toBe('https://as.example.com/token')
    expect(endpointUrl('https://as.example.com/', '/token')).toBe('https://as.example.com/token')
    expect(endpointUrl('https://example.com/auth', '/token')).toBe('https://example.com/auth/token')
  })
})
