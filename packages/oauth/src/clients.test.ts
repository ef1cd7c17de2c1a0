import { describe, expect, test } from 'vitest'
import { type ClientConfig, hashClientSecret, staticClients } from './clients.ts'

describe('hashClientSecret', () => {
  test('is base64url SHA-256 (FIPS 180-2 "abc" vector)', async () => {
    expect(await hashClientSecret('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0')
  })
})

describe('staticClients', () => {
  const spa: ClientConfig = {
    id: 'spa',
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
    ['the code grant without a redirect URI', [{ ...spa, redirectUris: [] }]],
    ['no grant', [{ ...spa, grantTypes: [] }]],
    ['an unknown grant', [{ ...spa, grantTypes: ['password' as never] }]],
    ['a scope outside the grammar', [{ ...spa, scopes: ['admin'] }]],
  ])('refuses %s', (_name, clients) => {
    expect(() => staticClients(clients)).toThrow(TypeError)
  })
})
