import { describe, expect, test } from 'vitest'
import { principalKey, principalOf, setPrincipal } from './principal.ts'
import { clientAddressOf, routeParamsOf, setClientAddress, setRouteParams } from './request-info.ts'

describe('principal', () => {
  test('is recorded on a request and read back', () => {
    const request = new Request('https://api.example/')
    expect(principalOf(request)).toBeUndefined()
    const principal = { subject: 'u1', clientId: 'app', scopes: ['read:orders'], claims: {} }
    setPrincipal(request, principal)
    expect(principalOf(request)).toBe(principal)
  })

  test('principalKey: the subject with its client, else the client, else none; encoded so no two collide', () => {
    expect(principalKey({ subject: 'u1', clientId: 'app', scopes: [], claims: {} })).toBe(
      'sub:u1;client:app',
    )
    expect(principalKey({ subject: 'u1', scopes: [], claims: {} })).toBe('sub:u1')
    // One user through two clients: two keys.
    expect(principalKey({ subject: 'u1', clientId: 'a', scopes: [], claims: {} })).not.toBe(
      principalKey({ subject: 'u1', clientId: 'b', scopes: [], claims: {} }),
    )
    // Encoding keeps a separator inside a part from forging another pair.
    expect(principalKey({ subject: 'u1;client:a', scopes: [], claims: {} })).not.toBe(
      principalKey({ subject: 'u1', clientId: 'a', scopes: [], claims: {} }),
    )
    expect(principalKey({ clientId: 'billing', scopes: [], claims: {} })).toBe('client:billing')
    expect(principalKey({ subject: 'a:b', scopes: [], claims: {} })).toBe('sub:a%3Ab')
    expect(principalKey({ subject: 'client:x', scopes: [], claims: {} })).not.toBe(
      principalKey({ clientId: 'x', scopes: [], claims: {} }),
    )
    expect(principalKey({ scopes: [], claims: {} })).toBeUndefined()
  })
})

describe('request info', () => {
  test('client address and route params are recorded per request', () => {
    const request = new Request('https://api.example/orders/42')
    expect(clientAddressOf(request)).toBeUndefined()
    expect(routeParamsOf(request)).toBeUndefined()
    setClientAddress(request, '203.0.113.7')
    setRouteParams(request, { id: '42' })
    expect(clientAddressOf(request)).toBe('203.0.113.7')
    expect(routeParamsOf(request)).toEqual({ id: '42' })
    expect(clientAddressOf(new Request('https://api.example/'))).toBeUndefined()
  })
})
