/**
 * Bad input is a 4xx, never a 500 or a crash: arbitrary queries, forms and headers at every
 * endpoint.
 */
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { authorizeQuery, ISSUER, makeServer } from './kit.ts'

const budget = { interruptAfterTimeLimit: 3000, numRuns: 300 }

/** Parameter names the endpoints read, so the generated requests get past the first check. */
const NAMES = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'prompt',
  'grant_type',
  'code',
  'code_verifier',
  'refresh_token',
  'client_secret',
  'token',
  'token_type_hint',
  'response_mode',
]
const value = fc.oneof(
  fc.string(),
  fc.constantFrom(
    'code',
    'authorization_code',
    'refresh_token',
    'client_credentials',
    'demo-spa',
    'demo-backend',
    'S256',
    'openid read:orders',
    'http://127.0.0.1:5173/callback',
    '%',
    '%zz',
    '+',
    '&',
    '=',
  ),
)
const pairs = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...NAMES), fc.string()), value), {
  maxLength: 12,
})

function encodeLoosely(list: [string, string][], raw: boolean): string {
  return list
    .map(([name, v]) =>
      raw ? `${name}=${v}` : `${encodeURIComponent(name)}=${encodeURIComponent(v)}`,
    )
    .join('&')
}

describe('no input makes an endpoint fail', async () => {
  const { server } = await makeServer()

  test('GET /authorize: 303, 400 or 414', async () => {
    await fc.assert(
      fc.asyncProperty(pairs, fc.boolean(), async (list, raw) => {
        let url: string
        try {
          url = new URL(`${ISSUER}/authorize?${encodeLoosely(list, raw)}`).href
        } catch {
          return
        }
        const response = await server.authorize(new Request(url))
        expect([303, 400, 414]).toContain(response.status)
      }),
      budget,
    )
  })

  test('GET /authorize: a valid request with one parameter changed is never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...NAMES), fc.string(), async (name, v) => {
        const response = await server.authorize(
          new Request(`${ISSUER}/authorize?${authorizeQuery({ [name]: v })}`),
        )
        expect([303, 400, 414]).toContain(response.status)
      }),
      budget,
    )
  })

  test.each(['/token', '/oauth/introspect', '/oauth/revoke'])(
    'POST %s: a 2xx or a 4xx JSON error',
    async (path) => {
      await fc.assert(
        fc.asyncProperty(
          pairs,
          fc.boolean(),
          fc.option(
            fc.oneof(
              fc.string(),
              fc.string().map((s) => `Basic ${s}`),
              fc.constantFrom(
                'Basic ZGVtby1zcGE6',
                'Basic ZGVtby1iYWNrZW5kOmRlbW8tYmFja2VuZC1zZWNyZXQ=',
              ),
            ),
          ),
          async (list, raw, authorization) => {
            const headers: Record<string, string> = {
              'content-type': 'application/x-www-form-urlencoded',
            }
            if (authorization !== null) {
              try {
                new Headers({ authorization })
                headers['authorization'] = authorization
              } catch {
                // Not a valid header value: a client cannot send it.
              }
            }
            const response = await server.handle(
              new Request(`${ISSUER}${path}`, {
                method: 'POST',
                headers,
                body: encodeLoosely(list, raw),
              }),
            )
            expect(response!.status).toBeLessThan(500)
            if (response!.status >= 400) {
              expect(response!.headers.get('content-type')).toBe('application/json')
              expect(await response!.json()).toHaveProperty('error')
            }
          },
        ),
        budget,
      )
    },
  )
})
