// The authorisation server's configuration (docs/service.md, "OAuth"): the OAUTH_CONFIG file,
// OAUTH_TOKEN_KEY, OAUTH_SIGNING_KEYS, ACCESS_TOKEN_FORMAT, and the pieces of the login pages
// that need no server: password hashes, HTML escaping, cookies and the session bound.
import { createHash, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { encodeBase64url } from '@api-blocks/core'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import {
  DEMO_CLIENTS,
  DEMO_USERS,
  loadAccounts,
  parseAccounts,
  UserDirectory,
} from '../src/auth/accounts.ts'
import { escapeHtml, html } from '../src/auth/html.ts'
import { hashPassword, isPasswordHash, verifyPassword } from '../src/auth/passwords.ts'
import { csrfMatches, readCookie, SessionStore } from '../src/auth/session.ts'
import {
  ConfigError,
  parseAccessTokenFormat,
  parseSigningKeys,
  parseTokenKey,
} from '../src/config.ts'

const refused = (run: () => unknown, message: RegExp) => {
  let caught: unknown
  try {
    run()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(ConfigError)
  expect((caught as Error).message).toMatch(message)
  return caught as Error
}

describe('OAUTH_TOKEN_KEY', () => {
  test('at least 32 bytes of unpadded base64url', () => {
    expect(parseTokenKey(encodeBase64url(new Uint8Array(32).fill(3)))).toEqual(
      new Uint8Array(32).fill(3),
    )
    refused(() => parseTokenKey(encodeBase64url(new Uint8Array(31))), /31 bytes; at least 32/)
    refused(() => parseTokenKey('not base64url!'), /not unpadded base64url/)
  })
})

const ecKey = (kid: string) => ({
  kid,
  alg: 'ES256',
  ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
})

describe('OAUTH_SIGNING_KEYS', () => {
  test('a JSON array of private JWKs, inline or in a file; the first signs', () => {
    const keys = [ecKey('k2'), ecKey('k1')]
    const parsed = parseSigningKeys(JSON.stringify(keys))
    expect(parsed.map((key) => [key.kid, key.alg])).toEqual([
      ['k2', 'ES256'],
      ['k1', 'ES256'],
    ])
    expect(parsed[0]?.privateJwk).toMatchObject({ kty: 'EC', crv: 'P-256', d: keys[0]?.d })
    const dir = mkdtempSync(join(tmpdir(), 'oauth-keys-'))
    const file = join(dir, 'keys.json')
    writeFileSync(file, JSON.stringify(keys))
    expect(parseSigningKeys(file).map((key) => key.kid)).toEqual(['k2', 'k1'])
  })

  test('RS256 keys of 2048 bits pass; shorter ones, public keys, HS256 and garbage are refused', () => {
    const rsa = (bits: number) => ({
      kid: `rsa-${bits}`,
      alg: 'RS256',
      ...generateKeyPairSync('rsa', { modulusLength: bits }).privateKey.export({ format: 'jwk' }),
    })
    expect(parseSigningKeys(JSON.stringify([rsa(2048)]))[0]?.alg).toBe('RS256')
    refused(() => parseSigningKeys(JSON.stringify([rsa(1024)])), /at least 2048 bits/)
    const { d: _, ...publicOnly } = ecKey('pub')
    refused(() => parseSigningKeys(JSON.stringify([publicOnly])), /"d" is missing/)
    refused(
      () => parseSigningKeys(JSON.stringify([{ kid: 'h', alg: 'HS256', kty: 'oct', k: 'AAAA' }])),
      /must be ES256/,
    )
    refused(
      () => parseSigningKeys(JSON.stringify([{ ...ecKey('x'), alg: 'RS256' }])),
      /must be ES256/,
    )
    refused(
      () => parseSigningKeys(JSON.stringify([{ ...ecKey('bad'), x: ecKey('y').x }])),
      /not a valid private key/,
    )
    refused(() => parseSigningKeys(JSON.stringify([ecKey('same'), ecKey('same')])), /used twice/)
    refused(
      () => parseSigningKeys(JSON.stringify([{ ...ecKey('a'), kid: 'a b' }])),
      /"kid" must be/,
    )
    refused(() => parseSigningKeys('[]'), /1 to 8/)
    refused(() => parseSigningKeys('[{'), /not valid JSON/)
    refused(() => parseSigningKeys('/no/such/file.json'), /JSON array of private JWKs, or the path/)
  })

  test('a refused key never shows its private part in the message', () => {
    const key = { ...ecKey('leak'), x: ecKey('other').x }
    const error = refused(() => parseSigningKeys(JSON.stringify([key])), /leak/)
    expect(error.message).not.toContain(key.d)
  })
})

test('ACCESS_TOKEN_FORMAT is opaque or jwt', () => {
  expect(parseAccessTokenFormat('opaque')).toBe('opaque')
  expect(parseAccessTokenFormat('jwt')).toBe('jwt')
  refused(() => parseAccessTokenFormat('JWT'), /opaque or jwt/)
})

describe('OAUTH_CONFIG', () => {
  const hash = createHash('sha256').update('s3cret').digest('base64url')
  const billing = {
    id: 'billing',
    name: 'Billing',
    secretHashes: [hash],
    grantTypes: ['client_credentials'],
    scopes: ['read:orders'],
  }
  // A public client: a native app on a private-use scheme and a loopback redirect.
  const spa = {
    id: 'notes',
    public: true,
    redirectUris: ['com.example.notes:/callback', 'http://127.0.0.1:7000/cb'],
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'read:orders'],
  }
  const grace = {
    username: 'grace',
    passwordHash: DEMO_USERS[0]?.passwordHash,
    name: 'Grace Hopper',
    email: 'grace@example.com',
    emailVerified: false,
  }

  test('adds clients and users to the demo ones; demo: false keeps only the file', () => {
    const accounts = parseAccounts(JSON.stringify({ clients: [billing], users: [grace] }))
    expect(accounts.clients.map((client) => client.id)).toEqual([
      ...DEMO_CLIENTS.map((client) => client.id),
      'billing',
    ])
    expect(accounts.users.map((user) => user.username)).toEqual(['ada', 'grace'])
    const only = parseAccounts(
      JSON.stringify({ demo: false, clients: [billing, spa], users: [grace] }),
    )
    expect(only.clients.map((client) => client.id)).toEqual(['billing', 'notes'])
    expect(only.clients[1]).toEqual(spa)
    // The demo SPA is public by the flag, as the authorisation server requires.
    expect(DEMO_CLIENTS.find((client) => client.id === 'demo-spa')?.public).toBe(true)
    // What the file accepts, the authorisation server accepts at start (its staticClients
    // refuses a client without secrets that is not public: true, and bad redirect URIs).
    expect(() =>
      createService({ oauth: { clients: only.clients, users: only.users } }),
    ).not.toThrow()
    const directory = new UserDirectory(only.users)
    expect(directory.byUsername('ada')).toBeUndefined()
    expect(directory.account('grace')).toEqual({
      subject: 'grace',
      username: 'grace',
      claims: { name: 'Grace Hopper', email: 'grace@example.com', email_verified: false },
    })
  })

  test('loadAccounts reads the file OAUTH_CONFIG names (at most 1 MiB)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-config-'))
    const file = join(dir, 'oauth.json')
    writeFileSync(file, JSON.stringify({ demo: false, clients: [billing] }))
    expect(loadAccounts(file).clients.map((client) => client.id)).toEqual(['billing'])
    writeFileSync(file, ' '.repeat(1024 * 1024 + 1))
    refused(() => loadAccounts(file), /over 1 MiB/)
    refused(() => loadAccounts(join(dir, 'missing.json')), /cannot read/)
  })

  test('invalid files are refused with the member at fault, never a secret in the message', () => {
    const cases: [unknown, RegExp][] = [
      [
        { clients: [{ ...billing, secretHashes: ['s3cret'] }] },
        /clients\.0\.secretHashes\.0: must be a base64url SHA-256/,
      ],
      [
        { clients: [{ ...billing, scopes: ['orders'] }] },
        /clients\.0\.scopes\.0: must be <verb>:<noun>/,
      ],
      [{ clients: [{ ...billing, grantTypes: ['password'] }] }, /clients\.0\.grantTypes\.0/],
      [{ clients: [{ ...billing, id: 'demo-spa' }] }, /"demo-spa" is used twice/],
      [{ clients: [{ ...billing, secretHashes: undefined }] }, /needs secretHashes/],
      [{ clients: [{ ...billing, grantTypes: ['authorization_code'] }] }, /needs redirectUris/],
      [
        { clients: [{ ...billing, grantTypes: ['authorization_code'], redirectUris: ['/cb'] }] },
        /redirectUris\.0: must be an absolute/,
      ],
      [
        { clients: [{ ...billing, redirectUris: ['https://app.example/cb#x'] }] },
        /redirectUris\.0: must not have a fragment/,
      ],
      // RFC 8252 §7 and RFC 9700 §2.1: https, loopback http, reverse-domain private-use schemes.
      [
        { clients: [{ ...billing, redirectUris: ['http://app.example/cb'] }] },
        /redirectUris\.0: may use http only for a loopback host/,
      ],
      [
        { clients: [{ ...billing, redirectUris: ['javascript:alert(1)'] }] },
        /redirectUris\.0: must not use the javascript: scheme/,
      ],
      [
        { clients: [{ ...billing, redirectUris: ['myapp:/cb'] }] },
        /redirectUris\.0: must use https, loopback http or a reverse-domain private-use scheme/,
      ],
      // RFC 6749 §2.1: public only by `public: true`, and then without secrets.
      [
        { clients: [{ ...spa, secretHashes: undefined, public: undefined }] },
        /client "notes": needs secretHashes \(a confidential client\), or "public": true/,
      ],
      [{ clients: [{ ...spa, secretHashes: [hash] }] }, /a public client has no secretHashes/],
      [
        { clients: [{ ...spa, grantTypes: ['client_credentials'] }] },
        /a public client cannot use client_credentials/,
      ],
      [{ clients: [{ ...spa, public: 'yes' }] }, /clients\.0\.public/],
      [{ clients: [{ ...billing, resources: ['orders'] }] }, /clients\.0\.resources\.0/],
      [
        { users: [{ ...grace, passwordHash: 'lovelace' }] },
        /users\.0\.passwordHash: must be a scrypt hash/,
      ],
      [{ users: [{ ...grace, username: 'ada' }] }, /"ada" \(or its subject\) is used twice/],
      [{ users: [{ ...grace, role: 'admin' }] }, /users\.0/],
      [{ users: [{ ...grace, subject: 'demo-spa' }] }, /subject "demo-spa", which is a client id/],
      [{ extra: true }, /\(top level\)/],
    ]
    for (const [config, message] of cases) {
      const error = refused(() => parseAccounts(JSON.stringify(config)), message)
      expect(error.message).not.toContain('s3cret')
    }
    refused(() => parseAccounts('{'), /not valid JSON/)
  })
})

describe('passwords (scrypt)', () => {
  test('a hash verifies its password only; an unknown user is refused after the same work', async () => {
    const stored = await hashPassword('correct horse', { logN: 10, r: 8, p: 1 })
    expect(isPasswordHash(stored)).toBe(true)
    expect(await verifyPassword(stored, 'correct horse')).toBe(true)
    expect(await verifyPassword(stored, 'correct hors')).toBe(false)
    expect(await verifyPassword(undefined, 'correct horse')).toBe(false)
    expect(await verifyPassword(DEMO_USERS[0]?.passwordHash, 'lovelace')).toBe(true)
    // Two hashes of one password differ (a random salt each).
    expect(await hashPassword('x', { logN: 10, r: 8, p: 1 })).not.toBe(
      await hashPassword('x', { logN: 10, r: 8, p: 1 }),
    )
  })

  test('hashes asking for too much memory or malformed are not hashes', () => {
    const good = DEMO_USERS[0]?.passwordHash ?? ''
    expect(isPasswordHash(good)).toBe(true)
    expect(isPasswordHash(good.replace('scrypt$15$', 'scrypt$24$'))).toBe(false)
    expect(isPasswordHash(good.replace('$8$1$', '$64$1$'))).toBe(false)
    expect(isPasswordHash(good.slice(0, -2))).toBe(false)
    expect(isPasswordHash('')).toBe(false)
  })
})

describe('HTML escaping', () => {
  test('no markup character survives, in text or in an attribute', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const escaped = escapeHtml(text)
        expect(escaped).not.toMatch(/[<>"']/)
        expect(escaped.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&')
        expect(html`<input value="${text}">`.text).toBe(`<input value="${escaped}">`)
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

describe('the session of the login pages', () => {
  const request = (cookie?: string) =>
    new Request('http://x.test/login', cookie ? { headers: { cookie } } : {})
  const cookieOf = (setCookie: string) => setCookie.split(';')[0] ?? ''

  test('MUST: HttpOnly, SameSite=Lax, Path=/, Max-Age; Secure and __Host- on https', () => {
    const plain = new SessionStore({ secure: false }).start(request()).setCookie
    expect(plain).toMatch(
      /^session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/,
    )
    const secure = new SessionStore({ secure: true }).start(request()).setCookie
    expect(secure).toMatch(
      /^__Host-session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax; Secure$/,
    )
  })

  test('a session is found by its cookie until it expires; a new one replaces the old id', () => {
    let now = 1_000_000
    const sessions = new SessionStore({ secure: false, ttlSeconds: 60, clock: () => now })
    const first = sessions.start(request())
    const cookie = cookieOf(first.setCookie)
    expect(sessions.find(request(cookie))?.csrf).toBe(first.session.csrf)
    expect(csrfMatches(first.session, first.session.csrf)).toBe(true)
    expect(csrfMatches(first.session, `${first.session.csrf}x`)).toBe(false)
    expect(csrfMatches(first.session, null)).toBe(false)
    // Signing in starts another: the old id (perhaps planted) is worth nothing.
    const signedIn = sessions.start(request(cookie), { subject: 'ada', authTime: 1000 })
    expect(sessions.find(request(cookie))).toBeUndefined()
    const next = cookieOf(signedIn.setCookie)
    expect(sessions.find(request(next))?.subject).toBe('ada')
    expect(sessions.find(request(`other=1; ${next}`))?.subject).toBe('ada')
    now += 60_000
    expect(sessions.find(request(next))).toBeUndefined()
  })

  test('bounded: past maxSessions the oldest go', () => {
    const sessions = new SessionStore({ secure: false, maxSessions: 3 })
    const cookies = Array.from({ length: 5 }, () => cookieOf(sessions.start(request()).setCookie))
    expect(sessions.size).toBe(3)
    expect(sessions.find(request(cookies[0]))).toBeUndefined()
    expect(sessions.find(request(cookies[4]))).toBeDefined()
  })

  test('MUST evict sessions not signed in before signed-in ones: a flood of login pages cannot push users out', () => {
    const sessions = new SessionStore({ secure: false, maxSessions: 3 })
    const users = [1, 2].map((n) =>
      cookieOf(sessions.start(request(), { subject: `user${n}`, authTime: 0 }).setCookie),
    )
    const flood = Array.from({ length: 50 }, (_, i) =>
      cookieOf(sessions.start(request(), undefined, `ip:198.51.100.${i}`).setCookie),
    )
    expect(sessions.size).toBe(3)
    for (const cookie of users) expect(sessions.find(request(cookie))?.subject).toBeDefined()
    expect(sessions.find(request(flood[49]))).toBeDefined()
    expect(sessions.find(request(flood[48]))).toBeUndefined()
    // With no session left that is not signed in, the oldest signed-in one goes.
    const third = cookieOf(sessions.start(request(), { subject: 'user3', authTime: 0 }).setCookie)
    const fourth = cookieOf(sessions.start(request(), { subject: 'user4', authTime: 0 }).setCookie)
    expect(sessions.find(request(third))).toBeDefined()
    expect(sessions.find(request(fourth))).toBeDefined()
    expect(sessions.find(request(users[0]))).toBeUndefined()
  })

  test('MUST cap the sessions not signed in of one address; other addresses keep theirs', () => {
    const sessions = new SessionStore({ secure: false, maxAnonymousPerAddress: 2 })
    const other = cookieOf(sessions.start(request(), undefined, 'ip:192.0.2.1').setCookie)
    const mine = Array.from({ length: 5 }, () =>
      cookieOf(sessions.start(request(), undefined, 'ip:203.0.113.9').setCookie),
    )
    expect(sessions.size).toBe(3)
    expect(sessions.find(request(other))).toBeDefined()
    expect(sessions.find(request(mine[4]))).toBeDefined()
    expect(sessions.find(request(mine[3]))).toBeDefined()
    expect(sessions.find(request(mine[2]))).toBeUndefined()
    // Signing in takes a session out of its address's count.
    sessions.start(request(mine[4]), { subject: 'ada', authTime: 0 })
    sessions.start(request(), undefined, 'ip:203.0.113.9')
    expect(sessions.find(request(mine[3]))).toBeDefined()
  })

  test('readCookie finds one cookie among several', () => {
    expect(readCookie('a=1; session=abc; b=2', 'session')).toBe('abc')
    expect(readCookie('a=1', 'session')).toBeUndefined()
    expect(readCookie(null, 'session')).toBeUndefined()
  })
})

describe('parsers never fail with anything but a ConfigError', () => {
  test('OAUTH_CONFIG, OAUTH_SIGNING_KEYS and OAUTH_TOKEN_KEY: any text or JSON value', () => {
    const parsers = [parseAccounts, parseSigningKeys, parseTokenKey, parseAccessTokenFormat]
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }).filter((text) => !text.trim().startsWith('/')),
          fc.json({ maxDepth: 4 }),
          fc
            .record({ clients: fc.array(fc.object({ maxDepth: 2 }), { maxLength: 3 }) })
            .map((v) => JSON.stringify(v)),
          fc.array(fc.object({ maxDepth: 2 }), { maxLength: 3 }).map((v) => JSON.stringify(v)),
        ),
        (text) => {
          for (const parse of parsers) {
            try {
              parse(text)
            } catch (error) {
              expect(error).toBeInstanceOf(ConfigError)
            }
          }
        },
      ),
      { interruptAfterTimeLimit: 3000, numRuns: 500 },
    )
  })

  test('readCookie takes any header value', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 20 }), (header, name) => {
        const value = readCookie(header, name)
        if (value !== undefined) expect(header).toContain(value)
      }),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})
