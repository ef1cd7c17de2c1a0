import { describe, expect, test } from 'vitest'
import { RELEASABLE_CLAIMS, releasedClaims } from './account.ts'

const ada = {
  subject: 'user-1',
  claims: {
    name: 'Ada Lovelace',
    given_name: 'Ada',
    email: 'ada@example.com',
    email_verified: true,
    sub: 'someone-else',
    iss: 'https://evil.example',
    phone_number: '+44 20 7946 0000',
    nickname: undefined,
  },
}

describe('releasedClaims (OpenID Connect Core §5.4)', () => {
  test('profile releases the profile claims, email the email claims', () => {
    expect(releasedClaims(ada, ['openid', 'profile'])).toEqual({
      name: 'Ada Lovelace',
      given_name: 'Ada',
    })
    expect(releasedClaims(ada, ['openid', 'email'])).toEqual({
      email: 'ada@example.com',
      email_verified: true,
    })
  })

  test('never sub, iss or a claim no granted scope releases; undefined values are left out', () => {
    const claims = releasedClaims(ada, ['openid', 'profile', 'email', 'read:orders'])
    expect(claims).not.toHaveProperty('sub')
    expect(claims).not.toHaveProperty('iss')
    expect(claims).not.toHaveProperty('phone_number')
    expect(claims).not.toHaveProperty('nickname')
  })

  test('no account, no claims', () => {
    expect(releasedClaims(undefined, ['profile'])).toEqual({})
    expect(releasedClaims({ subject: 'x' }, ['profile'])).toEqual({})
  })

  test('RELEASABLE_CLAIMS lists what discovery advertises', () => {
    expect(RELEASABLE_CLAIMS).toContain('preferred_username')
    expect(RELEASABLE_CLAIMS).toContain('email_verified')
  })
})
