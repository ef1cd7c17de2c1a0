import { describe, expect, it } from 'vitest'
import { principalFromClaims } from './principal.ts'

function claims() {
  return {
    active: true,
    sub: 'user-1',
    client_id: 'app',
    scope: 'read write',
    jti: 'jti-1',
    roles: { admin: ['a'] },
  }
}

describe('principalFromClaims', () => {
  it('copies claims by default: the caller keeps its object, unfrozen and unshared', () => {
    const given = claims()
    const principal = principalFromClaims(given)
    expect(principal.claims['roles']).not.toBe(given.roles)
    expect(Object.isFrozen(given)).toBe(false)
    expect(Object.isFrozen(given.roles)).toBe(false)
    given.roles.admin.push('b')
    expect(principal.claims['roles']).toEqual({ admin: ['a'] })
    expect(Object.isFrozen(principal.claims['roles'])).toBe(true)
  })

  it('freezes owned claims in place, without a copy, nested objects included', () => {
    const given = claims()
    const principal = principalFromClaims(given, true)
    expect(principal.claims['roles']).toBe(given.roles)
    expect(Object.isFrozen(given.roles)).toBe(true)
    expect(Object.isFrozen(given.roles.admin)).toBe(true)
    expect(Object.isFrozen(principal.claims)).toBe(true)
  })

  it.each([false, true])('answers the same principal either way (owned: %s)', (owned) => {
    const principal = principalFromClaims(claims(), owned)
    expect(principal).toEqual({
      subject: 'user-1',
      clientId: 'app',
      scopes: ['read', 'write'],
      claims: {
        sub: 'user-1',
        client_id: 'app',
        scope: 'read write',
        jti: 'jti-1',
        roles: { admin: ['a'] },
      },
      tokenId: 'jti-1',
    })
    expect('active' in principal.claims).toBe(false)
  })
})
