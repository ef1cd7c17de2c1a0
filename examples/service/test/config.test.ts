// What several instances must agree on comes from configuration: CURSOR_SECRET (the keys that
// sign cursors, with rotation) and PUBLIC_URL. Invalid values stop the start with a message.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { encodeBase64url } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import { ConfigError, parseCursorKeys, parsePublicUrl } from '../src/config.ts'
import { apiFetch } from './oauth-client.ts'

const secret = (fill: number, bytes = 32) => encodeBase64url(new Uint8Array(bytes).fill(fill))

describe('CURSOR_SECRET', () => {
  test('newest first, comma-separated <id>:<base64url secret> entries', () => {
    const keys = parseCursorKeys(`2026-06:${secret(1)}, 2026-01:${secret(2, 64)}`)
    expect(keys.map((key) => key.id)).toEqual(['2026-06', '2026-01'])
    expect(keys[0]?.secret).toEqual(new Uint8Array(32).fill(1))
    expect(keys[1]?.secret).toEqual(new Uint8Array(64).fill(2))
  })

  test('invalid values are refused with a message naming the key', () => {
    const cases: [string, RegExp][] = [
      ['', /key 1 must be <id>:<secret>/],
      [secret(1), /key 1 must be <id>:<secret>/],
      [`k1:${secret(1, 31)}`, /31 bytes; at least 32/],
      [`k1:${secret(1)}=`, /not unpadded base64url/],
      [`k1:${secret(1).replace('A', '+')}`, /not unpadded base64url/],
      [`k1:${secret(1)},k1:${secret(2)}`, /"k1" is used twice/],
      [`bad id:${secret(1)}`, /the id must be/],
      [`k1:${secret(1)},`, /key 2 must be/],
      [Array.from({ length: 9 }, (_, i) => `k${i}:${secret(i)}`).join(','), /at most 8/],
    ]
    for (const [text, message] of cases) {
      let caught: unknown
      try {
        parseCursorKeys(text)
      } catch (error) {
        caught = error
      }
      expect(caught, text).toBeInstanceOf(ConfigError)
      expect((caught as ConfigError).code).toBe('INVALID_CONFIG')
      expect((caught as Error).message, text).toMatch(message)
      // The secret never appears in the message.
      expect((caught as Error).message).not.toContain(secret(1))
    }
  })
})

test('PUBLIC_URL: an http(s) origin with an optional base path; nothing else', () => {
  expect(parsePublicUrl('https://api.example.com/')).toBe('https://api.example.com')
  expect(parsePublicUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080')
  expect(parsePublicUrl('https://example.com/shop/')).toBe('https://example.com/shop')
  for (const bad of [
    'api.example.com',
    'ftp://x',
    'https://u:p@x',
    'https://x/?a=1',
    'https://x/#f',
    '',
  ]) {
    expect(() => parsePublicUrl(bad), bad).toThrow(ConfigError)
  }
})

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))

/** Starts `npm start`'s entry point and collects its output until it exits or prints its banner. */
async function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--conditions=@api-blocks/source', main], {
    env: { PATH: process.env['PATH'] ?? '', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    if (stdout.includes('Try (')) child.kill('SIGTERM')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const [code] = (await once(child, 'exit')) as [number | null]
  return { code, stdout, stderr }
}

describe('npm start', () => {
  test('an invalid CURSOR_SECRET or PUBLIC_URL stops the start with a clear message', async () => {
    const bad = await start({ CURSOR_SECRET: 'k1:c2hvcnQ' })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(
      /^Invalid configuration: CURSOR_SECRET key 1 \("k1"\): the secret is 5 bytes; at least 32/,
    )
    const url = await start({ PUBLIC_URL: 'api.example.com' })
    expect(url.code).toBe(1)
    expect(url.stderr).toMatch(/^Invalid configuration: PUBLIC_URL must be an absolute URL/)
  })

  test('invalid OAuth settings stop the start; with a shared store the keys are required', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { OAUTH_TOKEN_KEY: 'c2hvcnQ' },
        /^Invalid configuration: OAUTH_TOKEN_KEY is 5 bytes; at least 32/,
      ],
      [
        { OAUTH_SIGNING_KEYS: '[{"kid":"k"}]' },
        /^Invalid configuration: OAUTH_SIGNING_KEYS key 1 \("k"\): "alg" must be ES256/,
      ],
      [
        { ACCESS_TOKEN_FORMAT: 'paseto' },
        /^Invalid configuration: ACCESS_TOKEN_FORMAT must be opaque or jwt/,
      ],
      [{ OAUTH_CONFIG: '/no/such/file.json' }, /^Invalid configuration: OAUTH_CONFIG: cannot read/],
      [
        { PUBLIC_URL: 'http://api.example.com' },
        /^Invalid configuration: the public URL http:\/\/api\.example\.com is the OAuth issuer, which must be https/,
      ],
      // Checked before any connection is tried (nothing listens on port 1).
      [
        { REDIS_URL: 'redis://127.0.0.1:1' },
        /^Invalid configuration: OAUTH_TOKEN_KEY must be set when REDIS_URL or DATABASE_URL is/,
      ],
      [
        { DATABASE_URL: 'postgres://127.0.0.1:1/x', OAUTH_TOKEN_KEY: secret(1) },
        /^Invalid configuration: OAUTH_SIGNING_KEYS must be set when REDIS_URL or DATABASE_URL is/,
      ],
    ]
    for (const [env, message] of cases) {
      const result = await start(env)
      expect(result.code, JSON.stringify(env)).toBe(1)
      expect(result.stderr).toMatch(message)
    }
  }, 30_000)

  test('the banner prints the issuer and a ready command that gets a token and calls /v1/orders with it', async () => {
    const child = spawn(process.execPath, ['--conditions=@api-blocks/source', main], {
      env: { PATH: process.env['PATH'] ?? '', PORT: '0', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    try {
      let stdout = ''
      child.stdout.setEncoding('utf8')
      for await (const chunk of child.stdout) {
        stdout += chunk
        if (stdout.includes('no token: 401')) break
      }
      const base = /listening on (http:\/\/\S+)/.exec(stdout)?.[1] ?? ''
      expect(stdout).toContain(
        `issuer:   ${base} (OAuth 2.0 / OpenID Connect: ${base}/.well-known/openid-configuration)`,
      )
      // The first two commands of "Try", run by a shell as printed.
      const lines = stdout.split('\n').map((line) => line.trim())
      const first = lines.findIndex((line) => line.startsWith('TOKEN=$('))
      expect(first).toBeGreaterThan(0)
      const script = `${lines[first]}\n${lines[first + 1]} -s -o /dev/null -w '%{http_code}'`
      const shell = spawn('/bin/sh', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] })
      let status = ''
      shell.stdout.on('data', (chunk: Buffer) => {
        status += chunk
      })
      await once(shell, 'exit')
      expect(status).toBe('200')
    } finally {
      child.kill('SIGTERM')
    }
  })

  test('the banner names the key, or warns that a random one is in use', async () => {
    const configured = await start({
      CURSOR_SECRET: `2026-06:${secret(7)}`,
      PUBLIC_URL: 'https://api.example.com',
    })
    expect(configured.stdout).toContain('signed with key "2026-06" (CURSOR_SECRET)')
    expect(configured.stdout).toContain('public:   https://api.example.com')
    const unset = await start({})
    expect(unset.stdout).toMatch(/WARNING: CURSOR_SECRET is not set/)
  })

  test('without PUBLIC_URL, Location names the port the server got (PORT=0 picks one)', async () => {
    const child = spawn(process.execPath, ['--conditions=@api-blocks/source', main], {
      env: { PATH: process.env['PATH'] ?? '', PORT: '0' },
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    try {
      let stdout = ''
      child.stdout.setEncoding('utf8')
      for await (const chunk of child.stdout) {
        stdout += chunk
        if (stdout.includes('Try (')) break
      }
      const base = /listening on (http:\/\/\S+)/.exec(stdout)?.[1] ?? ''
      expect(base).toMatch(/:\d+$/)
      expect(base).not.toMatch(/:0$/)
      const created = await apiFetch(`${base}/v1/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customer: 'Ada', items: [{ sku: 'B', quantity: 1 }] }),
      })
      expect(created.status).toBe(201)
      const location = created.headers.get('location') ?? ''
      expect(location.startsWith(`${base}/v1/orders/ord_`)).toBe(true)
      expect((await apiFetch(location)).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
    }
  })
})
