/**
 * The RFC 9700 attack table at the authorization endpoint, as data: each attack refused with the
 * right error, back to the client when the client and redirect URI can be trusted, with an error
 * page otherwise.
 *
 * @module
 */
import { expect } from 'vitest'
import type { ServerSuiteContext } from './server-context.ts'
import { authorizeQuery, authorizeRequest, ISSUER, SPA_REDIRECT } from './server-kit.ts'

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

/** Registers the authorization-endpoint attacks. */
export function redirectedAttackCases({ it }: ServerSuiteContext): void {
  for (const { name, changes, raw, error, state } of REDIRECTED) {
    it(name, async (makeServer) => {
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
  }
}

/** Registers the authorization requests that must be answered with an error page. */
export function pageAttackCases({ it }: ServerSuiteContext): void {
  for (const { name, changes, raw } of PAGES) {
    it(name, async (makeServer) => {
      const { server } = await makeServer()
      const query = authorizeQuery(changes)
      const response = await server.authorize(authorizeRequest(raw ? raw(query) : query))
      expect(response.status).toBe(400)
      expect(response.headers.get('location')).toBeNull()
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      expect(await response.text()).toContain('<h1>')
    })
  }
}
