import { describe, expect, test } from 'vitest'
import { contextKey, copyContext, getContext, requestIdOf, setContext } from './context.ts'

describe('per-request context', () => {
  test('values are stored per Request object, without cloning it', () => {
    const key = contextKey<string>('tenant')
    const a = new Request('https://api.example/a')
    const b = new Request('https://api.example/b')
    setContext(a, key, 'acme')
    expect(getContext(a, key)).toBe('acme')
    expect(getContext(b, key)).toBeUndefined()
  })

  test('two keys with the same description do not collide', () => {
    const first = contextKey<number>('n')
    const second = contextKey<number>('n')
    const request = new Request('https://api.example/')
    setContext(request, first, 1)
    setContext(request, second, 2)
    expect([getContext(request, first), getContext(request, second)]).toEqual([1, 2])
  })

  test('copyContext carries the values to a replacement Request', () => {
    const key = contextKey<string>('user')
    const original = new Request('https://api.example/v1/x')
    setContext(original, key, 'u1')
    const rewritten = new Request(new URL('/v2/x', original.url), original)
    copyContext(original, rewritten)
    expect(getContext(rewritten, key)).toBe('u1')
    copyContext(new Request('https://api.example/'), rewritten)
    expect(getContext(rewritten, key)).toBe('u1')
  })

  test('a frozen Request keeps its context too (kept aside, not on the object)', () => {
    const key = contextKey<string>('user')
    const frozen = Object.freeze(new Request('https://api.example/'))
    setContext(frozen, key, 'u2')
    expect(getContext(frozen, key)).toBe('u2')
    const copy = new Request('https://api.example/copy')
    copyContext(frozen, copy)
    expect(getContext(copy, key)).toBe('u2')
    const alsoFrozen = Object.freeze(new Request('https://api.example/other'))
    copyContext(copy, alsoFrozen)
    expect(getContext(alsoFrozen, key)).toBe('u2')
  })

  test('the values are invisible to string keys and JSON', () => {
    const request = new Request('https://api.example/')
    setContext(request, contextKey<string>('user'), 'u3')
    expect(Object.keys(request)).toEqual([])
    expect(JSON.stringify(request)).toBe('{}')
  })

  test('requestIdOf is undefined without the requestId middleware', () => {
    expect(requestIdOf(new Request('https://api.example/'))).toBeUndefined()
  })
})
