/**
 * Secrets at rest: the store under test is wrapped in a recording proxy, a whole life of tokens
 * runs through the endpoints (the code flow with PKCE for openid and offline_access, a refresh,
 * client credentials, an introspection and two revocations), and no argument the server passed
 * the store, nor anything the store answered, may hold an issued access token, refresh token,
 * ID token, authorization code, PKCE verifier or client secret. Codes and tokens reach a store
 * only as keyed hashes (HMAC-SHA-256 under the token key), client secrets only as SHA-256
 * hashes (RFC 6819 §5.1.4.1.3, "No Cleartext Storage of Credentials"), so a leaked store
 * yields no usable credential.
 *
 * @module
 */
import { createHmacKey } from '@api-blocks/core/crypto'
import { expect } from 'vitest'
import type { ResourceConfig } from '../options.ts'
import type { OAuthStore } from '../store.ts'
import { keyedHash } from '../tokens.ts'
import type { ServerSuiteContext } from './server-context.ts'
import {
  BACKEND_SECRET,
  basic,
  exchange,
  ISSUER,
  json,
  makeHarness,
  obtainCode,
  post,
  refresh,
  VERIFIER,
} from './server-kit.ts'

/** One call the server made on the store: its arguments and its result, as JSON. */
interface StoreCall {
  readonly method: string
  readonly args: string
  readonly result: string
}

/** Wraps `store` so every method call is recorded, deep-serialised, in `calls`. */
function recordingStore(store: OAuthStore, calls: StoreCall[]): OAuthStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver)
      if (typeof value !== 'function') return value
      return async (...args: unknown[]) => {
        const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args)
        calls.push({
          method: String(property),
          args: JSON.stringify(args) ?? '',
          result: JSON.stringify(result) ?? '',
        })
        return result
      }
    },
  })
}

/** Registers the at-rest cases: once with opaque access tokens, once with JWT access tokens. */
export function atRestCases({ it }: ServerSuiteContext): void {
  for (const format of ['opaque', 'jwt'] as const) {
    it(`no code, token, PKCE verifier or client secret MUST reach the store in the clear (${format} access tokens)`, async (makeServer) => {
      // A server over a fresh store of the suite (cleaned up afterwards), then a second server
      // over the same store seen through the recorder, with a known token key.
      const { store, clock } = await makeServer()
      const calls: StoreCall[] = []
      const tokenKey = new Uint8Array(32).fill(7)
      const resources: ResourceConfig[] = [{ identifier: ISSUER, accessTokenFormat: format }]
      const harness = await makeHarness(
        recordingStore(store, calls),
        { tokenKey, resources },
        clock.now,
      )
      const { server } = harness

      // The code flow with PKCE, for openid and offline_access.
      const { code } = await obtainCode(harness)
      const first = await json(await exchange(harness, code))
      expect(first).toMatchObject({ token_type: 'Bearer' })
      expect(first['scope']).toContain('offline_access')
      harness.clock.advance(1000)
      const second = await json(await refresh(harness, first['refresh_token'] as string))
      expect(second['refresh_token']).toBeTypeOf('string')

      // Client credentials, introspected and revoked by its client.
      const backend = { authorization: basic('demo-backend', BACKEND_SECRET) }
      const credentials = await json(
        await server.token(post('/token', { grant_type: 'client_credentials' }, backend)),
      )
      expect(credentials['access_token']).toBeTypeOf('string')
      const introspected = await server.introspect(
        post('/oauth/introspect', { token: credentials['access_token'] as string }, backend),
      )
      expect(await json(introspected)).toMatchObject({ active: true, client_id: 'demo-backend' })
      expect((await server.introspectToken(second['access_token'] as string)).active).toBe(true)
      const revokedOwn = await server.revoke(
        post('/oauth/revoke', { token: credentials['access_token'] as string }, backend),
      )
      expect(revokedOwn.status).toBe(200)
      const revokedFamily = await server.revoke(
        post('/oauth/revoke', {
          token: second['refresh_token'] as string,
          client_id: 'demo-spa',
        }),
      )
      expect(revokedFamily.status).toBe(200)
      expect((await server.introspectToken(second['access_token'] as string)).active).toBe(false)

      const secrets: Record<string, string> = {
        'authorization code': code,
        'PKCE verifier': VERIFIER,
        'client secret': BACKEND_SECRET,
      }
      for (const [name, body] of Object.entries({ first, second, credentials })) {
        for (const field of ['access_token', 'refresh_token', 'id_token']) {
          const value = body[field]
          if (typeof value === 'string') secrets[`${name} ${field}`] = value
        }
      }
      expect(Object.keys(secrets)).toEqual(
        expect.arrayContaining([
          'first access_token',
          'first refresh_token',
          'first id_token',
          'second access_token',
          'second refresh_token',
          'credentials access_token',
        ]),
      )
      if (format === 'jwt') {
        // An RFC 9068 JWT access token: three parts, typ at+jwt.
        expect(secrets['first access_token']!.split('.')).toHaveLength(3)
      }

      for (const call of calls) {
        for (const [name, secret] of Object.entries(secrets)) {
          expect(call.args, `the ${name} in the arguments of ${call.method}`).not.toContain(secret)
          expect(call.result, `the ${name} in the result of ${call.method}`).not.toContain(secret)
        }
      }

      // The recorder saw the whole life, and the store got the keyed hashes instead.
      const methods = new Set(calls.map((call) => call.method))
      for (const method of [
        'saveInteraction',
        'takeInteraction',
        'saveCode',
        'consumeCode',
        'issue',
        'rotateRefresh',
        'findToken',
        'revokeToken',
        'revokeFamily',
      ]) {
        expect(methods, method).toContain(method)
      }
      const key = createHmacKey(tokenKey)
      const recorded = calls.map((call) => call.args).join('\n')
      expect(recorded).toContain(await keyedHash(key, code))
      expect(recorded).toContain(await keyedHash(key, first['refresh_token'] as string))
    })
  }
}
