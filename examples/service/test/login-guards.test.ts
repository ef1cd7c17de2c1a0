// What keeps POST /login from being a lever on the whole service or on one account: at most a
// few scrypt derivations at once and a short queue (503 past it), queued checks of aborted
// requests dropped, a small per-address budget, a growing lock per user name, an unknown name
// checked with the users' own scrypt parameters, and a cap on what one derivation may cost.
import { describe, expect, test } from 'vitest'
import type { ServiceOptions } from '../src/app.ts'
import { createService } from '../src/app.ts'
import { DEMO_USERS } from '../src/auth/accounts.ts'
import type { Deriver, ScryptParameters } from '../src/auth/passwords.ts'
import {
  DEFAULT_SCRYPT,
  dummyParameters,
  hashPassword,
  isPasswordHash,
  PasswordCheckBusyError,
  PasswordChecker,
} from '../src/auth/passwords.ts'
import { LoginThrottle } from '../src/auth/throttle.ts'
import { Browser, DEMO_SPA, hiddenField } from './oauth-client.ts'

/** A deriver that holds every derivation until released, and counts those in progress. */
function gatedDeriver() {
  const waiting: (() => void)[] = []
  const seen: ScryptParameters[] = []
  let running = 0
  let peak = 0
  const derive: Deriver = async (_password, _salt, { logN, r, p }) => {
    seen.push({ logN, r, p })
    running++
    peak = Math.max(peak, running)
    await new Promise<void>((resolve) => waiting.push(resolve))
    running--
    return Buffer.alloc(32)
  }
  return {
    derive,
    seen,
    get running() {
      return running
    },
    get peak() {
      return peak
    },
    /** Lets every derivation started so far finish, then waits for the next ones to start. */
    async releaseAll() {
      for (const release of waiting.splice(0)) release()
      await new Promise((resolve) => setImmediate(resolve))
    },
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('PasswordChecker', () => {
  test('runs at most maxConcurrent derivations, queues maxQueued, refuses the next (busy)', async () => {
    const gate = gatedDeriver()
    const checker = new PasswordChecker({
      storedHashes: [],
      maxConcurrent: 2,
      maxQueued: 8,
      derive: gate.derive,
    })
    const checks = Array.from({ length: 12 }, () =>
      checker.verify(undefined, 'guess').then(
        (ok) => ({ ok }),
        (error: unknown) => ({ error }),
      ),
    )
    await settle()
    expect(gate.running).toBe(2)
    expect(checker.load).toEqual({ running: 2, queued: 8 })
    for (let round = 0; round < 6; round++) await gate.releaseAll()
    const results = await Promise.all(checks)
    expect(gate.peak).toBe(2)
    expect(gate.seen).toHaveLength(10)
    expect(results.filter((result) => 'ok' in result)).toHaveLength(10)
    const refused = results.filter((result) => 'error' in result)
    expect(refused).toHaveLength(2)
    for (const result of refused) {
      expect((result as { error: unknown }).error).toBeInstanceOf(PasswordCheckBusyError)
    }
    expect(checker.load).toEqual({ running: 0, queued: 0 })
  })

  test('drops a queued check whose request was aborted: it never derives', async () => {
    const gate = gatedDeriver()
    const checker = new PasswordChecker({ storedHashes: [], maxConcurrent: 1, derive: gate.derive })
    const first = checker.verify(undefined, 'a')
    const aborted = new AbortController()
    const second = checker.verify(undefined, 'b', aborted.signal)
    const third = checker.verify(undefined, 'c')
    await settle()
    expect(checker.load).toEqual({ running: 1, queued: 2 })
    aborted.abort(new Error('gone'))
    await expect(second).rejects.toThrow('gone')
    expect(checker.load).toEqual({ running: 1, queued: 1 })
    await gate.releaseAll()
    await gate.releaseAll()
    await expect(first).resolves.toBe(false)
    await expect(third).resolves.toBe(false)
    expect(gate.seen).toHaveLength(2)
    // Already aborted: refused before it queues.
    await expect(
      checker.verify(undefined, 'd', AbortSignal.abort(new Error('late'))),
    ).rejects.toThrow('late')
  })

  test('MUST check an unknown name with the parameters of the configured users (no timing oracle)', async () => {
    const strong =
      'scrypt$17$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    expect(dummyParameters([strong])).toEqual({ logN: 17, r: 8, p: 1 })
    expect(new PasswordChecker({ storedHashes: [strong] }).dummy).toEqual({ logN: 17, r: 8, p: 1 })
    // The demo user's N = 2^15 when it is the only one; the costliest when they differ.
    const demo = DEMO_USERS[0]?.passwordHash ?? ''
    expect(dummyParameters([demo])).toEqual({ logN: 15, r: 8, p: 1 })
    expect(dummyParameters([demo, strong])).toEqual({ logN: 17, r: 8, p: 1 })
    expect(dummyParameters([])).toEqual(DEFAULT_SCRYPT)
    // What is derived: the same parameters for a known and an unknown name.
    const gate = gatedDeriver()
    const checker = new PasswordChecker({ storedHashes: [strong], derive: gate.derive })
    const known = checker.verify(strong, 'guess')
    const unknown = checker.verify(undefined, 'guess')
    await settle()
    await gate.releaseAll()
    await Promise.all([known, unknown])
    expect(gate.seen).toEqual([
      { logN: 17, r: 8, p: 1 },
      { logN: 17, r: 8, p: 1 },
    ])
  })

  test('MUST refuse a configured hash whose derivation would need more than 256 MiB (128 * N * r)', async () => {
    const hash = (logN: number, r: number, p = 1) =>
      `scrypt$${logN}$${r}$${p}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`
    expect(isPasswordHash(hash(17, 8))).toBe(true) // 128 MiB
    expect(isPasswordHash(hash(18, 8))).toBe(true) // 256 MiB
    expect(isPasswordHash(hash(20, 2))).toBe(true) // 256 MiB
    expect(isPasswordHash(hash(19, 8))).toBe(false) // 512 MiB
    expect(isPasswordHash(hash(20, 16))).toBe(false) // 2 GiB: within each bound, not their product
    expect(isPasswordHash(hash(18, 16))).toBe(false)
    expect(isPasswordHash(hash(18, 8, 4))).toBe(true) // p costs time, not memory
    // A real hash within the bound still verifies.
    expect(isPasswordHash(await hashPassword('x', { logN: 10, r: 8, p: 1 }))).toBe(true)
  })
})

describe('LoginThrottle', () => {
  test('locks a name after 5 failures for 2^n seconds, at most 15 minutes; a success forgets it', () => {
    let now = 0
    const throttle = new LoginThrottle({ clock: () => now })
    for (let i = 0; i < 4; i++) throttle.failed('ada')
    expect(throttle.retryAfter('ada')).toBeUndefined()
    throttle.failed('ada')
    expect(throttle.retryAfter('ada')).toBe(1)
    const locks: number[] = []
    for (let i = 0; i < 12; i++) {
      // Past every lock (15 minutes at most), within the quiet period that forgets a name.
      now += 900_000
      throttle.failed('ada')
      locks.push(throttle.retryAfter('ada') ?? 0)
    }
    expect(locks).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900])
    expect(throttle.retryAfter('bob')).toBeUndefined()
    throttle.succeeded('ada')
    expect(throttle.retryAfter('ada')).toBeUndefined()
  })

  test('forgets a name after a quiet period, and holds at most maxEntries names', () => {
    let now = 0
    const throttle = new LoginThrottle({ clock: () => now, maxEntries: 3 })
    for (let i = 0; i < 5; i++) throttle.failed('ada')
    expect(throttle.retryAfter('ada')).toBe(1)
    now += 1000 + 900_000
    throttle.failed('ada')
    expect(throttle.retryAfter('ada')).toBeUndefined() // one failure of a fresh count
    for (const name of ['a', 'b', 'c', 'd']) throttle.failed(name)
    expect(throttle.size).toBe(3)
  })
})

describe('POST /login, in process', () => {
  const PUBLIC = 'https://api.example'
  const setup = (extra: Partial<ServiceOptions> = {}, derive?: Deriver) => {
    let now = Date.UTC(2026, 10, 22, 10, 0, 0)
    const service = createService({
      publicUrl: PUBLIC,
      clock: () => now,
      rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
      clientAddress: () => '192.0.2.1',
      ...(derive ? { oauth: { passwordChecks: { derive } } } : {}),
      ...extra,
    })
    const atLogin = async () => {
      const browser = new Browser(service)
      const authorized = await browser.get(
        `${PUBLIC}/authorize?${new URLSearchParams({
          client_id: DEMO_SPA.id,
          redirect_uri: DEMO_SPA.redirectUri,
          response_type: 'code',
          scope: 'openid read:orders',
          state: 'state-1',
          nonce: 'nonce-1',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
      )
      const page = await (await browser.get(authorized.headers.get('location') ?? '')).text()
      const fields = {
        interaction: hiddenField(page, 'interaction'),
        csrf: hiddenField(page, 'csrf'),
      }
      const signIn = (username: string, password: string) =>
        browser.post(`${PUBLIC}/login`, [
          ['interaction', fields.interaction],
          ['csrf', fields.csrf],
          ['username', username],
          ['password', password],
        ])
      return { browser, signIn }
    }
    return { service, atLogin, advance: (ms: number) => (now += ms) }
  }

  test('at most 2 derivations at once and 8 waiting: the next sign-in is a 503 page with Retry-After', async () => {
    const gate = gatedDeriver()
    const { atLogin } = setup({}, gate.derive)
    const { signIn } = await atLogin()
    const posts = Array.from({ length: 11 }, (_, i) => signIn(`user${i}`, 'guess'))
    // The eleventh is refused while the others wait for the gate.
    let busy: Response | undefined
    while (busy === undefined) {
      await settle()
      expect(gate.running).toBeLessThanOrEqual(2)
      if (gate.seen.length === 2)
        busy = await Promise.race([...posts, settle().then(() => undefined)])
    }
    expect(busy.status).toBe(503)
    expect(busy.headers.get('retry-after')).toBe('1')
    expect(busy.headers.get('content-type')).toBe('text/html; charset=utf-8')
    for (let round = 0; round < 6; round++) await gate.releaseAll()
    const statuses = (await Promise.all(posts)).map((response) => response.status)
    expect(statuses.filter((status) => status === 401)).toHaveLength(10)
    expect(statuses.filter((status) => status === 503)).toHaveLength(1)
    expect(gate.peak).toBe(2)
  })

  test('MUST lock a name after 5 failures, known or not, with the same generic 429 page; the lock runs out', async () => {
    const { atLogin, advance } = setup()
    const { signIn } = await atLogin()
    const pages: string[] = []
    for (const name of ['ada', 'nobody']) {
      for (let i = 0; i < 5; i++) expect((await signIn(name, 'wrong')).status).toBe(401)
      const locked = await signIn(name, name === 'ada' ? 'lovelace' : 'wrong')
      expect(locked.status).toBe(429)
      expect(locked.headers.get('retry-after')).toBe('1')
      pages.push(await locked.text())
    }
    // Nothing on the page tells a locked real name from a locked unknown one.
    expect(pages[0]).toBe(pages[1])
    expect(pages[0]).toContain('Too many failed sign-ins')
    advance(1000)
    expect((await signIn('ada', 'lovelace')).status).toBe(303)
  })

  test('MUST limit POST /login per address to its own small budget (429 with RateLimit fields)', async () => {
    const { atLogin } = setup({ loginRateLimits: [{ name: 'login', quota: 3, windowSeconds: 60 }] })
    const { signIn } = await atLogin()
    for (let i = 0; i < 3; i++) {
      const response = await signIn(`user${i}`, 'wrong')
      expect(response.status).toBe(401)
    }
    const limited = await signIn('user9', 'wrong')
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).not.toBeNull()
    expect(limited.headers.get('ratelimit-limit')).toBe('3')
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
  })

  test('the default login budget is 20 a minute per address, apart from the general limit', async () => {
    const { atLogin, service } = setup()
    const { signIn } = await atLogin()
    for (let i = 0; i < 20; i++) expect((await signIn(`user${i}`, 'wrong')).status).toBe(401)
    expect((await signIn('user99', 'wrong')).status).toBe(429)
    // Other routes of the same address are not charged to it.
    const home = await service(
      new Request(`${PUBLIC}/`, { headers: { accept: 'application/json' } }),
    )
    expect(home.status).toBe(200)
  })
})
