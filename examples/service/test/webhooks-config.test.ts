// The webhook settings of the environment: WEBHOOK_RETRY_BASE_MS, WEBHOOK_RETRY_MAX_MS,
// WEBHOOK_MAX_ATTEMPTS, WEBHOOK_TIMEOUT_MS and WEBHOOK_ALLOWED_PRIVATE_ORIGINS. Invalid values
// stop the start with a message naming the variable.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { ConfigError, parseWebhookSettings } from '../src/config.ts'

describe('parseWebhookSettings', () => {
  test('nothing set: the typical schedule, the sender’s deadline, no private origin', () => {
    expect(parseWebhookSettings({})).toEqual({
      retry: undefined,
      timeoutMs: undefined,
      allowedOrigins: [],
    })
    expect(parseWebhookSettings({ WEBHOOK_RETRY_BASE_MS: '' }).retry).toBeUndefined()
  })

  test('any of base, max or attempts set: the exponential policy, the others defaulted', () => {
    expect(
      parseWebhookSettings({ WEBHOOK_RETRY_BASE_MS: '10', WEBHOOK_MAX_ATTEMPTS: '3' }).retry,
    ).toEqual({
      baseMs: 10,
      maxMs: 86_400_000,
      maxAttempts: 3,
    })
    expect(parseWebhookSettings({ WEBHOOK_MAX_ATTEMPTS: '2' }).retry).toEqual({
      baseMs: 60_000,
      maxMs: 86_400_000,
      maxAttempts: 2,
    })
    // A cap below the default base brings the base down to it.
    expect(parseWebhookSettings({ WEBHOOK_RETRY_MAX_MS: '50' }).retry).toEqual({
      baseMs: 50,
      maxMs: 50,
      maxAttempts: 7,
    })
    expect(parseWebhookSettings({ WEBHOOK_TIMEOUT_MS: '2500' }).timeoutMs).toBe(2500)
  })

  test('exact origins, deduplicated; the URL standard’s spelling', () => {
    expect(
      parseWebhookSettings({
        WEBHOOK_ALLOWED_PRIVATE_ORIGINS:
          'http://127.0.0.1:4000, https://[::1]:8443,http://127.0.0.1:4000',
      }).allowedOrigins,
    ).toEqual(['http://127.0.0.1:4000', 'https://[::1]:8443'])
  })

  test('invalid values are refused with a message naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ WEBHOOK_RETRY_BASE_MS: '0' }, /WEBHOOK_RETRY_BASE_MS must be a whole number from 1/],
      [{ WEBHOOK_RETRY_BASE_MS: '1.5' }, /WEBHOOK_RETRY_BASE_MS must be a whole number/],
      [{ WEBHOOK_RETRY_MAX_MS: '-1' }, /WEBHOOK_RETRY_MAX_MS must be a whole number/],
      [
        { WEBHOOK_RETRY_MAX_MS: '86400001' },
        /WEBHOOK_RETRY_MAX_MS must be a whole number from 1 to 86400000/,
      ],
      [{ WEBHOOK_MAX_ATTEMPTS: '51' }, /WEBHOOK_MAX_ATTEMPTS must be a whole number from 1 to 50/],
      [{ WEBHOOK_MAX_ATTEMPTS: 'ten' }, /WEBHOOK_MAX_ATTEMPTS must be a whole number/],
      [
        { WEBHOOK_TIMEOUT_MS: '60001' },
        /WEBHOOK_TIMEOUT_MS must be a whole number from 1 to 60000/,
      ],
      [
        { WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_MS: '10' },
        /WEBHOOK_RETRY_MAX_MS \(10\) must not be below WEBHOOK_RETRY_BASE_MS \(100\)/,
      ],
      [{ WEBHOOK_ALLOWED_PRIVATE_ORIGINS: 'http://127.0.0.1:4000/' }, /is not an origin/],
      [{ WEBHOOK_ALLOWED_PRIVATE_ORIGINS: 'http://127.0.0.1:4000/hooks' }, /is not an origin/],
      [{ WEBHOOK_ALLOWED_PRIVATE_ORIGINS: '127.0.0.1:4000' }, /is not an origin/],
      [{ WEBHOOK_ALLOWED_PRIVATE_ORIGINS: 'ftp://127.0.0.1' }, /is not an origin/],
      [{ WEBHOOK_ALLOWED_PRIVATE_ORIGINS: 'http://u:p@127.0.0.1:4000' }, /is not an origin/],
      [{ WEBHOOK_ALLOWED_PRIVATE_ORIGINS: 'http://127.0.0.1:80' }, /is not an origin/],
      [
        {
          WEBHOOK_ALLOWED_PRIVATE_ORIGINS: Array.from(
            { length: 17 },
            (_, index) => `http://127.0.0.1:${4000 + index}`,
          ).join(','),
        },
        /at most 16/,
      ],
    ]
    for (const [env, message] of cases) {
      let caught: unknown
      try {
        parseWebhookSettings(env)
      } catch (error) {
        caught = error
      }
      expect(caught, JSON.stringify(env)).toBeInstanceOf(ConfigError)
      expect((caught as Error).message, JSON.stringify(env)).toMatch(message)
    }
  })
})

test('npm start: an invalid WEBHOOK_* setting stops the start with a message naming it', async () => {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))
  for (const [env, message] of [
    [{ WEBHOOK_MAX_ATTEMPTS: '0' }, /^Invalid configuration: WEBHOOK_MAX_ATTEMPTS must be/],
    [
      { WEBHOOK_ALLOWED_PRIVATE_ORIGINS: 'http://127.0.0.1:4000/hooks' },
      /^Invalid configuration: WEBHOOK_ALLOWED_PRIVATE_ORIGINS: "http:\/\/127\.0\.0\.1:4000\/hooks" is not an origin/,
    ],
  ] as const) {
    const child = spawn(process.execPath, ['--conditions=@api-blocks/source', main], {
      env: { PATH: process.env['PATH'] ?? '', PORT: '0', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const [code] = (await once(child, 'exit')) as [number | null]
    expect(code, JSON.stringify(env)).toBe(1)
    expect(stderr).toMatch(message)
  }
}, 30_000)
