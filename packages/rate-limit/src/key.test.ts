import type { Principal } from '@api-blocks/core'
import { setClientAddress, setPrincipal } from '@api-blocks/core'
import { problems } from '@api-blocks/problem-details'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { MAX_API_KEY_LENGTH, rateLimitKey } from './key.ts'

const request = (headers: Record<string, string> = {}) =>
  new Request('https://api.example/v1/orders', { headers })
const user = (subject: string): Principal => ({ subject, scopes: [], claims: {} })

describe('rateLimitKey', () => {
  test('the principal wins over an API key and the address: principal:<principalKey>', async () => {
    const options = { apiKeyHeader: 'x-api-key', clientIp: () => '203.0.113.7' }
    const withKey = request({ 'x-api-key': 'k-123' })
    expect(await rateLimitKey(withKey, { ...options, principal: 'alice' })).toBe(
      'principal:sub:alice',
    )
    expect(await rateLimitKey(withKey, { ...options, principal: user('bob') })).toBe(
      'principal:sub:bob',
    )
    expect(
      await rateLimitKey(withKey, {
        ...options,
        principal: { clientId: 'billing', scopes: [], claims: {} },
      }),
    ).toBe('principal:client:billing')
    // principalKey encodes, so a subject cannot pose as another kind of key
    expect(await rateLimitKey(withKey, { ...options, principal: 'a:b/c' })).toBe(
      'principal:sub:a%3Ab%2Fc',
    )
  })

  test('without a principal option, the principal recorded on the request (principalOf)', async () => {
    const signedIn = request({ 'x-api-key': 'k-123' })
    setPrincipal(signedIn, user('carol'))
    expect(await rateLimitKey(signedIn, { apiKeyHeader: 'x-api-key' })).toBe('principal:sub:carol')
    expect(await rateLimitKey(signedIn, { principal: undefined })).toBe('principal:sub:carol')
    // a principal given in the options wins over the recorded one
    expect(await rateLimitKey(signedIn, { principal: 'dave' })).toBe('principal:sub:dave')
  })

  test('principal null (or an empty subject) keys the request without one, whoever signed in', async () => {
    const signedIn = request({ 'x-api-key': 'k-123' })
    setPrincipal(signedIn, user('carol'))
    setClientAddress(signedIn, '203.0.113.7')
    expect(await rateLimitKey(signedIn, { principal: null })).toBe('ip:203.0.113.7/32')
    expect(await rateLimitKey(signedIn, { principal: '' })).toBe('ip:203.0.113.7/32')
    expect(await rateLimitKey(signedIn, { principal: null, apiKeyHeader: 'x-api-key' })).toMatch(
      /^api-key:/,
    )
  })

  test('a principal with neither subject nor client id names nobody: keyed as unauthenticated', async () => {
    const nobody = request()
    setPrincipal(nobody, { scopes: ['read'], claims: {} })
    setClientAddress(nobody, '203.0.113.7')
    expect(await rateLimitKey(nobody)).toBe('ip:203.0.113.7/32')
  })

  test('without a clientIp option, the address the adapter recorded (clientAddressOf)', async () => {
    const seen = request()
    setClientAddress(seen, '2001:db8:1:2a3::7')
    expect(await rateLimitKey(seen)).toBe('ip:2001:db8:1:200::/56')
    // a clientIp function wins over the recorded address
    expect(await rateLimitKey(seen, { clientIp: () => '198.51.100.1' })).toBe('ip:198.51.100.1/32')
  })

  test('an API key is hashed with SHA-256 (128 bits, base64url), never kept raw', async () => {
    const key = await rateLimitKey(request({ 'x-api-key': 'secret-key-123' }), {
      apiKeyHeader: 'x-api-key',
      clientIp: () => '203.0.113.7',
    })
    const digest = new Uint8Array(
      await crypto.subtle.digest('SHA-256', new TextEncoder().encode('secret-key-123')),
    )
    const expected = btoa(String.fromCharCode(...digest.slice(0, 16)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '')
    expect(key).toBe(`api-key:${expected}`)
    expect(key).not.toContain('secret')
    expect(key).toHaveLength('api-key:'.length + 22)
  })

  test('different API keys give different keys, the same key the same one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({
          minLength: 1,
          maxLength: 64,
          unit: fc.constantFrom(...'abcdefXYZ0123456789-_'),
        }),
        fc.string({
          minLength: 1,
          maxLength: 64,
          unit: fc.constantFrom(...'abcdefXYZ0123456789-_'),
        }),
        async (a, b) => {
          const of = (value: string) =>
            rateLimitKey(request({ 'x-api-key': value }), { apiKeyHeader: 'x-api-key' })
          expect((await of(a)) === (await of(b))).toBe(a === b)
        },
      ),
      { interruptAfterTimeLimit: 2000, numRuns: 200 },
    )
  })

  test(`MUST: an API key over ${MAX_API_KEY_LENGTH} characters answers 431 header-too-large`, async () => {
    const error = await rateLimitKey(request({ 'x-api-key': 'k'.repeat(MAX_API_KEY_LENGTH + 1) }), {
      apiKeyHeader: 'x-api-key',
    }).catch((e: unknown) => e)
    expect(problems.headerTooLarge.is((error as { toProblem(): unknown }).toProblem())).toBe(true)
    expect(error).toMatchObject({ status: 431 })
  })

  test('an empty API key header falls through to the address', async () => {
    const key = await rateLimitKey(request({ 'x-api-key': '  ' }), {
      apiKeyHeader: 'x-api-key',
      clientIp: () => '203.0.113.7',
    })
    expect(key).toBe('ip:203.0.113.7/32')
  })

  test('IPv6 is masked to /56 by default; the prefix is configurable', async () => {
    const clientIp = () => '2001:db8:1:2a3:4:5:6:7'
    expect(await rateLimitKey(request(), { clientIp })).toBe('ip:2001:db8:1:200::/56')
    expect(await rateLimitKey(request(), { clientIp, ipv6PrefixLength: 64 })).toBe(
      'ip:2001:db8:1:2a3::/64',
    )
    expect(await rateLimitKey(request(), { clientIp, ipv6PrefixLength: 128 })).toBe(
      'ip:2001:db8:1:2a3:4:5:6:7/128',
    )
  })

  test('every address of one /56 shares a key', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 }),
        fc.integer({ min: 0, max: 0xff }),
        async (low, byte) => {
          const text = [
            '2001',
            'db8',
            'ab',
            (0x1200 | byte).toString(16),
            ...low.map((n) => n.toString(16)),
          ].join(':')
          expect(await rateLimitKey(request(), { clientIp: () => text })).toBe(
            'ip:2001:db8:ab:1200::/56',
          )
        },
      ),
      { interruptAfterTimeLimit: 2000, numRuns: 200 },
    )
  })

  test('IPv4-mapped IPv6 is counted as the IPv4 address (a dual-stack socket)', async () => {
    expect(await rateLimitKey(request(), { clientIp: () => '::ffff:203.0.113.7' })).toBe(
      'ip:203.0.113.7/32',
    )
    expect(await rateLimitKey(request(), { clientIp: () => '203.0.113.7' })).toBe(
      'ip:203.0.113.7/32',
    )
    expect(
      await rateLimitKey(request(), { clientIp: () => '::ffff:203.0.113.7', ipv4PrefixLength: 24 }),
    ).toBe('ip:203.0.113.0/24')
  })

  test('no address, or text that is not one, shares the conservative key ip:unknown', async () => {
    expect(await rateLimitKey(request())).toBe('ip:unknown')
    expect(await rateLimitKey(request(), { clientIp: () => undefined })).toBe('ip:unknown')
    expect(await rateLimitKey(request(), { clientIp: () => 'random-junk-1' })).toBe('ip:unknown')
    expect(await rateLimitKey(request(), { clientIp: () => 'random-junk-2' })).toBe('ip:unknown')
  })

  test('prefix lengths out of range are refused', async () => {
    await expect(rateLimitKey(request(), { ipv6PrefixLength: 129 })).rejects.toBeInstanceOf(
      RangeError,
    )
    await expect(rateLimitKey(request(), { ipv4PrefixLength: -1 })).rejects.toBeInstanceOf(
      RangeError,
    )
  })
})
