import { describe, expect, test } from 'vitest'
import {
  contextKey,
  copyContext,
  deleteContext,
  getContext,
  setContext,
  sharedContextKey,
} from './context.ts'

describe('per-request context', () => {
  test('stores and reads typed values per request', () => {
    const tenant = contextKey<string>('tenant')
    const a = new Request('https://api.example/a')
    const b = new Request('https://api.example/b')
    setContext(a, tenant, 'acme')
    expect(getContext(a, tenant)).toBe('acme')
    expect(getContext(b, tenant)).toBeUndefined()
  })

  test('two keys with one description are distinct; shared keys are one', () => {
    const first = contextKey<number>('n')
    const second = contextKey<number>('n')
    const request = new Request('https://api.example/')
    setContext(request, first, 1)
    expect(getContext(request, second)).toBeUndefined()
    setContext(request, sharedContextKey<number>('test.n'), 2)
    expect(getContext(request, sharedContextKey<number>('test.n'))).toBe(2)
  })

  test('deleteContext removes one value', () => {
    const key = contextKey<string>('k')
    const request = new Request('https://api.example/')
    expect(deleteContext(request, key)).toBe(false)
    setContext(request, key, 'v')
    expect(deleteContext(request, key)).toBe(true)
    expect(getContext(request, key)).toBeUndefined()
  })

  test('copyContext carries every value to another request, overwriting', () => {
    const one = contextKey<string>('one')
    const two = contextKey<string>('two')
    const from = new Request('https://api.example/')
    const to = new Request('https://api.example/v2')
    setContext(from, one, 'a')
    setContext(from, two, 'b')
    setContext(to, one, 'old')
    copyContext(from, to)
    expect(getContext(to, one)).toBe('a')
    expect(getContext(to, two)).toBe('b')
    copyContext(new Request('https://api.example/'), to) // nothing to copy: unchanged
    expect(getContext(to, one)).toBe('a')
  })

  test('a request that cannot take a property keeps its context in a WeakMap', () => {
    const key = contextKey<string>('k')
    const frozen = Object.freeze(new Request('https://api.example/'))
    setContext(frozen, key, 'v')
    expect(getContext(frozen, key)).toBe('v')
    const to = Object.preventExtensions(new Request('https://api.example/'))
    copyContext(frozen, to)
    expect(getContext(to, key)).toBe('v')
  })
})
