/**
 * The replay cache (`remember`): a key is new once, then known until its expiry.
 *
 * @module
 */
import { expect } from 'vitest'
import type { SuiteContext } from './suite.ts'
import { MINUTE, randomId, tally } from './suite.ts'

/** Registers the replay-cache cases. */
export function rememberCases(context: SuiteContext): void {
  const { it, t0, concurrency } = context

  it('remember MUST answer true once, false until expiresAt, and true again from it on', async (store) => {
    const key = `jti:${randomId()}`
    const expiresAt = t0 + MINUTE
    expect(await store.remember(key, expiresAt, t0)).toBe(true)
    expect(await store.remember(key, expiresAt, t0 + 1)).toBe(false)
    expect(await store.remember(key, expiresAt + MINUTE, expiresAt - 1)).toBe(false)
    expect(await store.remember(key, expiresAt + MINUTE, expiresAt)).toBe(true)
    expect(await store.remember(key, expiresAt + 2 * MINUTE, expiresAt + 1)).toBe(false)
  })

  it('remembered keys are independent', async (store) => {
    const first = `jti:${randomId()}`
    const second = `jti:${randomId()}`
    expect(await store.remember(first, t0 + MINUTE, t0)).toBe(true)
    expect(await store.remember(second, t0 + MINUTE, t0)).toBe(true)
    expect(await store.remember(first, t0 + MINUTE, t0)).toBe(false)
  })

  it(`of ${concurrency} concurrent remember calls with one key exactly one MUST answer true`, async (store) => {
    const key = `jti:${randomId()}`
    const answers = await Promise.all(
      Array.from({ length: concurrency }, () => store.remember(key, t0 + MINUTE, t0)),
    )
    expect(tally(answers)).toEqual({ true: 1, false: concurrency - 1 })
  })

  it(`of ${concurrency} concurrent remember calls on an expired key exactly one MUST answer true`, async (store) => {
    const key = `jti:${randomId()}`
    expect(await store.remember(key, t0 + MINUTE, t0)).toBe(true)
    const answers = await Promise.all(
      Array.from({ length: concurrency }, () => store.remember(key, t0 + 2 * MINUTE, t0 + MINUTE)),
    )
    expect(tally(answers)).toEqual({ true: 1, false: concurrency - 1 })
  })
}
