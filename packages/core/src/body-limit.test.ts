import { describe, expect, test } from 'vitest'
import { bodyLimitOf, setBodyLimit } from './body-limit.ts'
import { copyContext } from './context.ts'

describe('body limit', () => {
  test('is recorded per request, replaced by a later call, and copied with the context', () => {
    const request = new Request('https://api.example/', { method: 'POST', body: 'x' })
    expect(bodyLimitOf(request)).toBeUndefined()
    setBodyLimit(request, 65_536)
    expect(bodyLimitOf(request)).toBe(65_536)
    setBodyLimit(request, 1024)
    expect(bodyLimitOf(request)).toBe(1024)
    expect(bodyLimitOf(new Request('https://api.example/'))).toBeUndefined()
    const copy = new Request(request)
    copyContext(request, copy)
    expect(bodyLimitOf(copy)).toBe(1024)
  })

  test('a limit that is not a non-negative safe integer is a RangeError', () => {
    const request = new Request('https://api.example/')
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => setBodyLimit(request, bad)).toThrow(RangeError)
    }
    setBodyLimit(request, 0)
    expect(bodyLimitOf(request)).toBe(0)
  })
})
