import { describe, expect, it } from 'vitest'
import { ExpiringLru } from './expiring-lru.ts'

describe('ExpiringLru', () => {
  it('answers a value until its expiry, not at it', () => {
    const cache = new ExpiringLru<string>(10)
    cache.set('a', 'A', 1000, 0)
    expect(cache.get('a', 999)).toBe('A')
    expect(cache.get('a', 1000)).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it('evicts the least recently used entry when full', () => {
    const cache = new ExpiringLru<string>(2)
    cache.set('a', 'A', 1000, 0)
    cache.set('b', 'B', 1000, 0)
    cache.get('a', 1)
    cache.set('c', 'C', 1000, 1)
    expect(cache.get('b', 2)).toBeUndefined()
    expect(cache.get('a', 2)).toBe('A')
    expect(cache.get('c', 2)).toBe('C')
    expect(cache.size).toBe(2)
  })

  it('keeps nothing already expired, and nothing with room for none', () => {
    const cache = new ExpiringLru<string>(2)
    cache.set('a', 'A', 5, 5)
    expect(cache.size).toBe(0)
    const none = new ExpiringLru<string>(0)
    none.set('a', 'A', 1000, 0)
    expect(none.get('a', 1)).toBeUndefined()
  })

  it('replaces the value of a key set again', () => {
    const cache = new ExpiringLru<string>(2)
    cache.set('a', 'A', 1000, 0)
    cache.set('a', 'A2', 2000, 0)
    expect(cache.get('a', 1500)).toBe('A2')
    expect(cache.size).toBe(1)
  })
})
