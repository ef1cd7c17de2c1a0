import { describe, expect, test } from 'vitest'
import { isValidScope, parseScope, requireSubset } from './scope.ts'

describe('scopes', () => {
  test.each([
    'read:orders',
    'write:orders',
    'manage:webhooks',
    'read:order.items',
    'openid',
    'profile',
    'email',
    'offline_access',
  ])('%s is valid', (scope) => expect(isValidScope(scope)).toBe(true))

  test.each([
    'admin',
    'Read:orders',
    'read:',
    ':orders',
    'read orders',
    'read:orders:x',
    '',
    'phone',
  ])('%s is not valid', (scope) => expect(isValidScope(scope)).toBe(false))

  test('parseScope keeps the order and drops repeats', () => {
    expect(parseScope('openid read:orders openid')).toEqual(['openid', 'read:orders'])
  })

  test.each([
    ['two spaces', 'openid  read:orders'],
    ['a leading space', ' openid'],
    ['an unknown scope', 'openid admin'],
    ['more than 50 scopes', Array.from({ length: 51 }, (_, i) => `read:n${i}`).join(' ')],
    ['more than 1024 characters', `read:${'x'.repeat(1020)}`],
  ])('%s is invalid_scope', (_name, text) => {
    expect(() => parseScope(text)).toThrow(expect.objectContaining({ error: 'invalid_scope' }))
  })

  test('requireSubset', () => {
    expect(() => requireSubset(['a:b'], ['a:b', 'c:d'], 'x')).not.toThrow()
    expect(() => requireSubset(['e:f'], ['a:b'], 'x')).toThrow(
      expect.objectContaining({ error: 'invalid_scope' }),
    )
  })
})
