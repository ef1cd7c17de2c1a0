import { describe, expect, test } from 'vitest'
import { buildMetadata, publicJson } from './discovery.ts'
import { generateSigningKey } from './keys.ts'
import { resolveOptions } from './options.ts'

describe('buildMetadata', () => {
  test('id_token_signing_alg_values_supported follows the keys (oauth4webapi assumes RS256 otherwise)', async () => {
    const metadata = buildMetadata(
      resolveOptions({
        issuer: 'https://as.example.com/',
        clients: [],
        interactionUrl: (id) => id,
        signingKeys: [await generateSigningKey({ alg: 'RS256', kid: 'r' })],
        paths: { token: '/oauth2/token' },
      }),
    )
    expect(metadata.id_token_signing_alg_values_supported).toEqual(['RS256'])
    expect(metadata.issuer).toBe('https://as.example.com/')
    expect(metadata.token_endpoint).toBe('https://as.example.com/oauth2/token')
    expect(metadata.code_challenge_methods_supported).toEqual(['S256'])
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true)
    expect(Object.isFrozen(metadata)).toBe(true)
  })
})

test('publicJson: cacheable, readable from any origin', async () => {
  const response = publicJson({ a: 1 }, 300)
  expect(response.headers.get('cache-control')).toBe('public, max-age=300')
  expect(response.headers.get('access-control-allow-origin')).toBe('*')
  expect(await response.json()).toEqual({ a: 1 })
})
