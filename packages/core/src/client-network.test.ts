import { describe, expect, test } from 'vitest'
import { clientNetwork } from './client-network.ts'

describe('clientNetwork', () => {
  test('IPv6 is masked to /56 by default, IPv4 kept whole, IPv4-mapped counted as IPv4', () => {
    expect(clientNetwork('2001:db8:1:2a3::7')).toBe('2001:db8:1:200::/56')
    expect(clientNetwork('2001:db8:1:2ff:ffff::1')).toBe('2001:db8:1:200::/56')
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.7/32')
    expect(clientNetwork('::ffff:203.0.113.7')).toBe('203.0.113.7/32')
  })

  test('prefix lengths are options', () => {
    expect(clientNetwork('2001:db8:1:2a3::7', { ipv6PrefixLength: 64 })).toBe('2001:db8:1:2a3::/64')
    expect(clientNetwork('203.0.113.7', { ipv4PrefixLength: 24 })).toBe('203.0.113.0/24')
  })

  test('text that is not an address gives undefined; a prefix out of range throws', () => {
    expect(clientNetwork('')).toBeUndefined()
    expect(clientNetwork('example.com')).toBeUndefined()
    expect(clientNetwork('01.2.3.4')).toBeUndefined()
    expect(() => clientNetwork('', { ipv6PrefixLength: 129 })).toThrow(RangeError)
    expect(() => clientNetwork('1.2.3.4', { ipv4PrefixLength: -1 })).toThrow(RangeError)
  })
})
