import { describe, expect, test, vi } from 'vitest'
import { ApiBlocksError } from './error.ts'
import { StoreGuardError, storeGuard, withDeadline } from './index.ts'

const never = <T>(): Promise<T> => new Promise<T>(() => {})

describe('withDeadline', () => {
  test('settles as the promise does when it settles in time', async () => {
    await expect(withDeadline(Promise.resolve(7), 1_000)).resolves.toBe(7)
    const failure = new Error('ECONNREFUSED')
    await expect(withDeadline(Promise.reject(failure), 1_000)).rejects.toBe(failure)
  })

  test('an already settled promise arms no timer; one still pending does, and clears it when it settles', async () => {
    vi.useFakeTimers()
    try {
      const settled = withDeadline(Promise.resolve(1), 1_000)
      await Promise.resolve()
      await Promise.resolve()
      expect(vi.getTimerCount()).toBe(0)
      await expect(settled).resolves.toBe(1)
      let answer!: (value: number) => void
      const pending = withDeadline(
        new Promise<number>((resolve) => {
          answer = resolve
        }),
        1_000,
      )
      await Promise.resolve()
      await Promise.resolve()
      expect(vi.getTimerCount()).toBe(1)
      answer(2)
      await expect(pending).resolves.toBe(2)
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })

  test('MUST reject with STORE_TIMEOUT (503) when the promise never settles', async () => {
    const error = await withDeadline(never(), 10).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StoreGuardError)
    expect(error).toBeInstanceOf(ApiBlocksError)
    expect(error).toMatchObject({ code: 'STORE_TIMEOUT', status: 503 })
  })

  test('a late rejection is handled (no unhandled rejection), a late answer dropped', async () => {
    let reject: (error: Error) => void = () => {}
    const late = new Promise<number>((_, no) => {
      reject = no
    })
    await expect(withDeadline(late, 5)).rejects.toMatchObject({ code: 'STORE_TIMEOUT' })
    reject(new Error('too late'))
    await new Promise((resolve) => setTimeout(resolve, 5))
  })
})

describe('storeGuard', () => {
  function setup(breaker?: { failureThreshold?: number; cooldownMs?: number } | false) {
    const clock = { now: 1_000_000 }
    const guard = storeGuard({
      timeoutMs: 10,
      clock: () => clock.now,
      ...(breaker === undefined ? {} : { breaker }),
    })
    let calls = 0
    const fail = () => {
      calls++
      return Promise.reject(new Error('down'))
    }
    const answer = () => {
      calls++
      return Promise.resolve('ok')
    }
    return { guard, clock, fail, answer, calls: () => calls }
  }

  test('refuses a timeout, threshold or cooldown that is not positive', () => {
    expect(() => storeGuard({ timeoutMs: 0 })).toThrow(RangeError)
    expect(() => storeGuard({ timeoutMs: 10, breaker: { failureThreshold: 1.5 } })).toThrow(
      RangeError,
    )
    expect(() => storeGuard({ timeoutMs: 10, breaker: { cooldownMs: -1 } })).toThrow(RangeError)
  })

  test('passes answers and the store’s own errors through; a call that throws is a rejection', async () => {
    const { guard, answer } = setup()
    await expect(guard.run(answer)).resolves.toBe('ok')
    const failure = new Error('ECONNREFUSED')
    await expect(guard.run(() => Promise.reject(failure))).rejects.toBe(failure)
    await expect(
      guard.run(() => {
        throw failure
      }),
    ).rejects.toBe(failure)
  })

  test('MUST open after failureThreshold failures in a row and refuse calls without making them', async () => {
    const { guard, fail, answer, calls } = setup({ failureThreshold: 3, cooldownMs: 5_000 })
    await expect(guard.run(fail)).rejects.toThrow('down')
    await expect(guard.run(answer)).resolves.toBe('ok') // a success resets the count
    await expect(guard.run(fail)).rejects.toThrow('down')
    await expect(guard.run(fail)).rejects.toThrow('down')
    expect(guard.state).toBe('closed')
    // A timeout counts as a failure too.
    await expect(guard.run(never)).rejects.toMatchObject({ code: 'STORE_TIMEOUT' })
    expect(guard.state).toBe('open')
    const before = calls()
    const error = await guard.run(answer).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StoreGuardError)
    expect(error).toMatchObject({ code: 'STORE_CIRCUIT_OPEN', status: 503 })
    expect(calls()).toBe(before)
    expect(guard.retryAfterSeconds()).toBe(5)
  })

  test('after the cooldown one probe runs: its success closes the breaker, its failure reopens it', async () => {
    const { guard, clock, fail, answer } = setup({ failureThreshold: 1, cooldownMs: 2_000 })
    await expect(guard.run(fail)).rejects.toThrow('down')
    clock.now += 1_500
    expect(guard.retryAfterSeconds()).toBe(1)
    await expect(guard.run(answer)).rejects.toMatchObject({ code: 'STORE_CIRCUIT_OPEN' })
    clock.now += 500
    // The probe fails: open for another cooldown.
    await expect(guard.run(fail)).rejects.toThrow('down')
    expect(guard.state).toBe('open')
    expect(guard.retryAfterSeconds()).toBe(2)
    clock.now += 2_000
    let release: (value: string) => void = () => {}
    const probe = guard.run(
      () =>
        new Promise<string>((resolve) => {
          release = resolve
        }),
    )
    expect(guard.state).toBe('half-open')
    // While the probe is out, the others are refused at once.
    await expect(guard.run(answer)).rejects.toMatchObject({ code: 'STORE_CIRCUIT_OPEN' })
    release('back')
    await expect(probe).resolves.toBe('back')
    expect(guard.state).toBe('closed')
    await expect(guard.run(answer)).resolves.toBe('ok')
  })

  test('with breaker: false every call runs, within the deadline', async () => {
    const { guard, fail, answer, calls } = setup(false)
    for (let i = 0; i < 20; i++) await expect(guard.run(fail)).rejects.toThrow('down')
    expect(guard.state).toBe('closed')
    await expect(guard.run(answer)).resolves.toBe('ok')
    expect(calls()).toBe(21)
    await expect(guard.run(never)).rejects.toMatchObject({ code: 'STORE_TIMEOUT' })
  })
})
