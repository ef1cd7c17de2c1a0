/**
 * The RFC 9700 attack table: each attack, as data, refused with the right error.
 */
import { describe, expect, test } from 'vitest'
import {
  authorizeQuery,
  authorizeRequest,
  BACKEND_SECRET,
  basic,
  exchange,
  ISSUER,
  json,
  makeServer,
  obtainCode,
  post,
  SPA_REDIRECT,
} from './kit.ts'

/** Authorization requests that must come back to the client as an error (RFC 6749 §4.1.2.1). */
const REDIRECTED: readonly {
  name: string
  changes?: Record<string, string | undefined>
  raw?: (query: URLSearchParams) => string
  error: string
  state?: string | null
}[] = [
  {
    name: 'PKCE omitted (no code_challenge): MUST be refused (RFC 9700 §2.1.1)',
    changes: { code_challenge: undefined, code_challenge_method: undefined },
    error: 'invalid_request',
  },
  {
    name: 'PKCE downgrade to plain: MUST be refused',
    changes: {
      code_challenge_method: 'plain',
      code_challenge: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    },
    error: 'invalid_request',
  },
  {
    name: 'PKCE without a method (plain by default, RFC 7636 §4.3): MUST be refused',
    changes: { code_challenge_method: undefined },
    error: 'invalid_request',
  },
  {
    name: 'a code_challenge that is no S256 challenge: MUST be refused',
    changes: { code_challenge: 'short' },
    error: 'invalid_request',
  },
  {
    name: 'missing state: MUST be refused (and no state echoed)',
    changes: { state: undefined },
    error: 'invalid_request',
    state: null,
  },
  {
    name: 'state given twice: MUST be refused (RFC 6749 §3.1)',
    raw: (query) => `${query}&state=other`,
    error: 'invalid_request',
    state: null,
  },
  {
    name: 'scope given twice: MUST be refused',
    raw: (query) => `${query}&scope=read%3Aorders`,
    error: 'invalid_request',
  },
  {
    name: 'implicit grant (response_type=token): MUST be refused (RFC 9700 §2.1.2)',
    changes: { response_type: 'token' },
    error: 'unsupported_response_type',
  },
  {
    name: 'hybrid flow (response_type=code id_token): MUST be refused',
    changes: { response_type: 'code id_token' },
    error: 'unsupported_response_type',
  },
  {
    name: 'missing response_type: MUST be refused',
    changes: { response_type: undefined },
    error: 'invalid_request',
  },
  {
    name: 'openid without nonce: MUST be refused (our profile)',
    changes: { nonce: undefined },
    error: 'invalid_request',
  },
  {
    name: 'a scope beyond the client: MUST be refused',
    changes: { scope: 'openid manage:webhooks' },
    error: 'invalid_scope',
  },
  {
    name: 'a scope outside the grammar: MUST be refused',
    changes: { scope: 'admin' },
    error: 'invalid_scope',
  },
  {
    name: 'an unknown resource: MUST be refused (RFC 8707 §2)',
    changes: { resource: 'https://elsewhere.example.com/' },
    error: 'invalid_target',
  },
  {
    name: 'a request object: MUST be refused',
    changes: { request: 'eyJhbGciOiJub25lIn0.e30.' },
    error: 'request_not_supported',
  },
  {
    name: 'response_mode=fragment: MUST be refused',
    changes: { response_mode: 'fragment' },
    error: 'invalid_request',
  },
  {
    name: 'prompt=none: answered login_required',
    changes: { prompt: 'none' },
    error: 'login_required',
  },
  {
    name: 'a state longer than 512: MUST be refused (and not echoed)',
    changes: { state: 'x'.repeat(513) },
    error: 'invalid_request',
    state: null,
  },
]

describe('authorization requests refused back to the client with state and iss (RFC 9207)', () => {
  test.each(REDIRECTED)('$name', async ({ changes, raw, error, state }) => {
    const { server } = await makeServer()
    const query = authorizeQuery(changes)
    const response = await server.authorize(authorizeRequest(raw ? raw(query) : query))
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get('location')!)
    expect(location.origin + location.pathname).toBe(SPA_REDIRECT)
    expect(location.searchParams.get('error')).toBe(error)
    expect(location.searchParams.get('error_description')).toBeTruthy()
    expect(location.searchParams.get('iss')).toBe(ISSUER)
    expect(location.searchParams.get('state')).toBe(state === undefined ? 'state-123' : state)
    expect(location.searchParams.has('code')).toBe(false)
  })
})

/** Authorization requests whose client or redirect URI cannot be trusted: a page, never a redirect. */
const PAGES: readonly {
  name: string
  changes?: Record<string, string | undefined>
  raw?: (q: URLSearchParams) => string
}[] = [
  {
    name: 'redirect_uri in another case: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1:5173/Callback' },
  },
  {
    name: 'redirect_uri with an upper-case scheme: MUST NOT redirect',
    changes: { redirect_uri: 'HTTP://127.0.0.1:5173/callback' },
  },
  {
    name: 'redirect_uri on another port: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1:5174/callback' },
  },
  {
    name: 'redirect_uri without the port: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1/callback' },
  },
  {
    name: 'redirect_uri on another host: MUST NOT redirect',
    changes: { redirect_uri: 'http://localhost:5173/callback' },
  },
  {
    name: 'redirect_uri with a longer path: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1:5173/callback/evil' },
  },
  {
    name: 'redirect_uri as a prefix: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1:5173/call' },
  },
  {
    name: 'redirect_uri with a trailing slash: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1:5173/callback/' },
  },
  {
    name: 'redirect_uri with a query added: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1:5173/callback?next=evil' },
  },
  {
    name: 'redirect_uri with a fragment: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1:5173/callback#x' },
  },
  {
    name: 'redirect_uri with dot segments: MUST NOT redirect',
    changes: { redirect_uri: 'http://127.0.0.1:5173/x/../callback' },
  },
  { name: 'redirect_uri missing: MUST NOT redirect', changes: { redirect_uri: undefined } },
  {
    name: 'redirect_uri given twice: MUST NOT redirect',
    raw: (q) => `${q}&redirect_uri=${encodeURIComponent('https://evil.example/')}`,
  },
  { name: 'an unknown client: MUST NOT redirect', changes: { client_id: 'evil' } },
  { name: 'client_id missing: MUST NOT redirect', changes: { client_id: undefined } },
  { name: 'client_id given twice: MUST NOT redirect', raw: (q) => `${q}&client_id=demo-backend` },
  { name: 'a malformed query: MUST NOT redirect', raw: (q) => `${q}&x=%E0%A4%A` },
]

describe('authorization requests answered with an error page (RFC 6749 §4.1.2.1)', () => {
  test.each(PAGES)('$name', async ({ changes, raw }) => {
    const { server } = await makeServer()
    const query = authorizeQuery(changes)
    const response = await server.authorize(authorizeRequest(raw ? raw(query) : query))
    expect(response.status).toBe(400)
    expect(response.headers.get('location')).toBeNull()
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(await response.text()).toContain('<h1>')
  })
})

describe('token requests refused', () => {
  test('PKCE downgrade: a verifier for a code whose request had no challenge cannot happen, since such a request MUST be refused at /authorize', async () => {
    const { server, store } = await makeServer()
    const saved: unknown[] = []
    const spy = store.saveInteraction.bind(store)
    store.saveInteraction = async (interaction) => {
      saved.push(interaction)
      return spy(interaction)
    }
    const response = await server.authorize(
      authorizeRequest(
        authorizeQuery({ code_challenge: undefined, code_challenge_method: undefined }),
      ),
    )
    expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe(
      'invalid_request',
    )
    expect(saved).toEqual([])
  })

  test('a token request without code_verifier MUST be refused', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const response = await exchange(harness, code, { code_verifier: undefined })
    expect(response.status).toBe(400)
    expect(await json(response)).toMatchObject({ error: 'invalid_request' })
  })

  test('a wrong code_verifier MUST be refused, and the code is spent', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const wrong = await exchange(harness, code, { code_verifier: 'a'.repeat(43) })
    expect(await json(wrong)).toMatchObject({ error: 'invalid_grant' })
    const right = await exchange(harness, code)
    expect(await json(right)).toMatchObject({ error: 'invalid_grant' })
  })

  test('a replayed code MUST be refused and SHOULD revoke the tokens it issued (RFC 6749 §4.1.2)', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const first = await json(await exchange(harness, code))
    expect(await harness.server.introspectToken(first['access_token'] as string)).toMatchObject({
      active: true,
    })
    const replay = await exchange(harness, code)
    expect(replay.status).toBe(400)
    expect(await json(replay)).toMatchObject({ error: 'invalid_grant' })
    expect(await harness.server.introspectToken(first['access_token'] as string)).toEqual({
      active: false,
    })
    const refresh = await harness.server.token(
      post('/token', {
        grant_type: 'refresh_token',
        refresh_token: first['refresh_token'] as string,
        client_id: 'demo-spa',
      }),
    )
    expect(await json(refresh)).toMatchObject({ error: 'invalid_grant' })
    expect(harness.events.filter((event) => event.type === 'code_replayed')).toEqual([
      {
        type: 'code_replayed',
        code: 'INVALID_GRANT',
        clientId: 'demo-spa',
        familyId: expect.any(String),
      },
    ])
  })

  test('a code presented by another client MUST be refused, and is spent', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const stolen = await harness.server.token(
      post(
        '/token',
        {
          grant_type: 'authorization_code',
          code,
          redirect_uri: SPA_REDIRECT,
          code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        },
        { authorization: basic('demo-backend', BACKEND_SECRET) },
      ),
    )
    expect(await json(stolen)).toMatchObject({ error: 'invalid_grant' })
    expect(await json(await exchange(harness, code))).toMatchObject({ error: 'invalid_grant' })
  })

  test.each([
    ['another redirect_uri', 'http://127.0.0.1:5173/other'],
    ['a trailing slash', `${SPA_REDIRECT}/`],
  ])('a code with %s at the token endpoint MUST be refused', async (_name, redirectUri) => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    expect(await json(await exchange(harness, code, { redirect_uri: redirectUri }))).toMatchObject({
      error: 'invalid_grant',
    })
  })

  test('a code exchanged for another resource MUST be refused with invalid_target (RFC 8707)', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const response = await exchange(harness, code, { resource: 'https://other.example.com/' })
    expect(await json(response)).toMatchObject({ error: 'invalid_target' })
  })

  test('a code without redirect_uri at the token endpoint MUST be refused', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    expect(await json(await exchange(harness, code, { redirect_uri: undefined }))).toMatchObject({
      error: 'invalid_request',
    })
  })

  test('an expired code MUST be refused (60 s by default)', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    harness.clock.advance(60_000)
    expect(await json(await exchange(harness, code))).toMatchObject({ error: 'invalid_grant' })
  })

  test('a code still within its 60 s is exchanged', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    harness.clock.advance(59_999)
    expect((await exchange(harness, code)).status).toBe(200)
  })

  test.each([
    ['password', { grant_type: 'password', username: 'ada', password: 'lovelace' }],
    ['implicit', { grant_type: 'implicit' }],
    [
      'device code',
      { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'x' },
    ],
  ])('the %s grant MUST be refused with unsupported_grant_type', async (_name, form) => {
    const { server } = await makeServer()
    const response = await server.token(
      post('/token', form, { authorization: basic('demo-backend', BACKEND_SECRET) }),
    )
    expect(response.status).toBe(400)
    expect(await json(response)).toMatchObject({ error: 'unsupported_grant_type' })
  })

  test('a duplicated parameter at the token endpoint MUST be refused', async () => {
    const harness = await makeServer()
    const { code } = await obtainCode(harness)
    const response = await harness.server.token(
      post(
        '/token',
        `grant_type=authorization_code&code=${code}&code=${code}&redirect_uri=${encodeURIComponent(SPA_REDIRECT)}&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk&client_id=demo-spa`,
      ),
    )
    expect(await json(response)).toMatchObject({ error: 'invalid_request' })
    // The code was not consumed by the refused request.
    expect((await exchange(harness, code)).status).toBe(200)
  })
})
