import { describe, expectTypeOf, test } from 'vitest'
import type { StoreBreakerState, StoreGuard } from './index.ts'
import { storeGuard, withDeadline } from './index.ts'

describe('the store guard carries the call’s type', () => {
  test('run and withDeadline resolve with what the call resolves with', () => {
    const guard: StoreGuard = storeGuard({ timeoutMs: 100 })
    expectTypeOf(guard.run(() => Promise.resolve(42))).toEqualTypeOf<Promise<number>>()
    expectTypeOf(withDeadline(Promise.resolve('x'), 10)).toEqualTypeOf<Promise<string>>()
    expectTypeOf(guard.state).toEqualTypeOf<StoreBreakerState>()
    // @ts-expect-error: a call returns a promise, not a bare value
    guard.run(() => 42)
  })
})
