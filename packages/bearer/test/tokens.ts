/**
 * Keys and tokens for the tests, made with jose: an ES256 signing key with its public JWK,
 * and RFC 9068 access tokens with the claims a test chooses.
 */
import type { JWK, JWTPayload } from 'jose'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import type { JsonWebKeyLike } from '../src/options.ts'

export interface TestKey {
  readonly kid: string
  readonly alg: string
  readonly privateKey: CryptoKey
  readonly publicJwk: JsonWebKeyLike & JWK
}

export async function makeKey(kid: string, alg = 'ES256'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }
  return { kid, alg, privateKey, publicJwk: publicJwk as JsonWebKeyLike & JWK }
}

export const ISSUER = 'https://auth.example.com'
export const AUDIENCE = 'https://api.example.com'
/** The tests' clock: a fixed instant, in ms. */
export const NOW = 1_900_000_000_000
export const NOW_SECONDS: number = NOW / 1000

/** Valid RFC 9068 claims at {@link NOW}: a user `user-1` through the client `app`. */
export function claims(overrides: Record<string, unknown> = {}): JWTPayload {
  const base: JWTPayload = {
    iss: ISSUER,
    sub: 'user-1',
    aud: AUDIENCE,
    exp: NOW_SECONDS + 600,
    iat: NOW_SECONDS - 10,
    jti: 'jti-1',
    client_id: 'app',
    scope: 'read:orders write:orders',
  }
  const merged: Record<string, unknown> = { ...base, ...overrides }
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name]
  return merged as JWTPayload
}

export async function sign(
  key: TestKey,
  payload: JWTPayload = claims(),
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...header })
    .sign(key.privateKey)
}

function base64url(value: string | Uint8Array): string {
  return Buffer.from(value).toString('base64url')
}

/** An unsigned token (RFC 7519 §6.1): `alg: none` and an empty signature. */
export function unsecured(payload: JWTPayload = claims()): string {
  const header = base64url(JSON.stringify({ alg: 'none', typ: 'at+jwt' }))
  return `${header}.${base64url(JSON.stringify(payload))}.`
}

/**
 * The HS256 confusion attack (RFC 8725 §2.1): an HMAC over the token with the public key's
 * text as the secret, for a verifier that would take the key it holds as an HMAC secret.
 */
export async function hmacWithPublicKey(key: TestKey, secret: string): Promise<string> {
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: key.kid }))
  const body = base64url(JSON.stringify(claims()))
  const hmacKey = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const mac = await crypto.subtle.sign(
    'HMAC',
    hmacKey,
    new TextEncoder().encode(`${header}.${body}`),
  )
  return `${header}.${body}.${base64url(new Uint8Array(mac))}`
}
