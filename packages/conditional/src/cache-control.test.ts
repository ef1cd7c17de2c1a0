import { describe, expect, test } from 'vitest'
import { cacheControlPresets } from './cache-control.ts'

describe('cacheControlPresets (RFC 9111 §5.2.2)', () => {
  test('per-user data is never stored (docs/spec.md: private, no-store)', () => {
    expect(cacheControlPresets.perUser).toBe('private, no-store')
  })

  test('shared data is stored but revalidated before every reuse', () => {
    expect(cacheControlPresets.shared).toBe('no-cache')
    expect(cacheControlPresets.perUserRevalidate).toBe('private, no-cache')
  })

  test('the presets cannot be changed at run time', () => {
    expect(Object.isFrozen(cacheControlPresets)).toBe(true)
  })
})
