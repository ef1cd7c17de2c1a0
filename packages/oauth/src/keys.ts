/**
 * Signing keys: imported from private JWKs (or one ES256 key generated at start), the first
 * signs, all of them verify and are published in the JWKS, so a key can be rotated in
 * (published before it signs) and out (kept published until its tokens expire).
 *
 * @module
 */
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose'
import type { Random } from './tokens.ts'
import { randomId } from './tokens.ts'

/**
 * A JSON Web Key (RFC 7517) as a plain object: the members of the EC and RSA keys this server
 * signs with. Its own type, so that the public API does not depend on jose's or the DOM's.
 *
 * @example
 * ```ts
 * const jwk: JsonWebKeyLike = { kty: 'EC', crv: 'P-256', x: '…', y: '…', d: '…' }
 * ```
 */
export interface JsonWebKeyLike {
  kty: string
  kid?: string | undefined
  alg?: string | undefined
  use?: string | undefined
  crv?: string | undefined
  x?: string | undefined
  y?: string | undefined
  d?: string | undefined
  n?: string | undefined
  e?: string | undefined
  p?: string | undefined
  q?: string | undefined
  dp?: string | undefined
  dq?: string | undefined
  qi?: string | undefined
}

/**
 * The algorithms the server signs with: ES256 (the default) and RS256 (RFC 9068 §2.1 asks
 * every implementation for it).
 *
 * @example
 * ```ts
 * const alg: SigningAlgorithm = 'ES256'
 * ```
 */
export type SigningAlgorithm = 'ES256' | 'RS256'

/**
 * A signing key: its `kid` (in every token's header and in the JWKS), its algorithm and its
 * private JWK.
 *
 * @example
 * ```ts
 * const key: SigningKey = await generateSigningKey({ kid: '2026-11' })
 * createAuthorizationServer({ issuer, clients, interactionUrl, signingKeys: [key] })
 * ```
 */
export interface SigningKey {
  readonly kid: string
  readonly alg: SigningAlgorithm
  readonly privateJwk: JsonWebKeyLike
}

/**
 * A public key as the JWKS publishes it: the public members, `kid`, `alg` and `use: "sig"`.
 *
 * @example
 * ```ts
 * const jwks: { keys: PublicJwk[] } = await (await fetch(`${issuer}/.well-known/jwks.json`)).json()
 * ```
 */
export interface PublicJwk extends JsonWebKeyLike {
  kid: string
  alg: SigningAlgorithm
  use: 'sig'
}

/** One imported key. */
interface LoadedKey {
  readonly kid: string
  readonly alg: SigningAlgorithm
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
  readonly publicJwk: PublicJwk
}

/**
 * The keys of a server: `signing` signs, every one of `keys` verifies.
 *
 * @example
 * ```ts
 * const keys: KeySet = await loadKeySet([await generateSigningKey()])
 * ```
 */
export interface KeySet {
  readonly signing: LoadedKey
  readonly byKid: ReadonlyMap<string, LoadedKey>
  readonly jwks: { readonly keys: readonly PublicJwk[] }
  readonly algorithms: readonly SigningAlgorithm[]
}

/**
 * Generates a signing key (ES256 by default) with its private JWK, for configuration: store
 * the JWK as a secret and pass it back as `signingKeys` so that every instance signs alike.
 *
 * @example
 * ```ts
 * const key = await generateSigningKey({ alg: 'RS256', kid: 'rsa-2026' })
 * console.log(JSON.stringify(key.privateJwk)) // keep it secret
 * ```
 */
export async function generateSigningKey(
  options: { alg?: SigningAlgorithm; kid?: string; random?: Random } = {},
): Promise<SigningKey> {
  const alg = options.alg ?? 'ES256'
  const pair = await generateKeyPair(alg, { extractable: true })
  const jwk = (await exportJWK(pair.privateKey)) as JsonWebKeyLike
  const kid =
    options.kid ?? randomId(options.random ?? ((n) => crypto.getRandomValues(new Uint8Array(n))))
  return { kid, alg, privateJwk: { ...jwk, kid, alg } }
}

function publicMembers(jwk: JsonWebKeyLike, kid: string, alg: SigningAlgorithm): PublicJwk {
  // Only the public members, named one by one: a private member can never leak into the JWKS.
  return jwk.kty === 'EC'
    ? { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg, use: 'sig' }
    : { kty: 'RSA', n: jwk.n, e: jwk.e, kid, alg, use: 'sig' }
}

function checkKey(key: SigningKey): void {
  const { kid, alg, privateJwk: jwk } = key
  if (typeof kid !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(kid)) {
    throw new TypeError('A signing key kid is 1 to 128 visible ASCII characters')
  }
  if (alg === 'ES256') {
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256') {
      throw new TypeError(`Signing key ${kid}: ES256 takes an EC P-256 key`)
    }
  } else if (alg === 'RS256') {
    if (jwk.kty !== 'RSA' || (jwk.n ?? '').length < 342) {
      throw new TypeError(`Signing key ${kid}: RS256 takes an RSA key of at least 2048 bits`)
    }
  } else {
    throw new TypeError(`Signing key ${kid}: the algorithm is ES256 or RS256`)
  }
  if (typeof jwk.d !== 'string') throw new TypeError(`Signing key ${kid}: the JWK is not private`)
  if (jwk.alg !== undefined && jwk.alg !== alg) {
    throw new TypeError(`Signing key ${kid}: the JWK's alg is not ${alg}`)
  }
}

/**
 * Checks the keys' configuration synchronously (kids unique, algorithms and key types).
 *
 * @example
 * ```ts
 * checkSigningKeys([key]) // throws a TypeError for a public or mistyped key
 * ```
 */
export function checkSigningKeys(keys: readonly SigningKey[]): void {
  if (keys.length === 0) throw new TypeError('signingKeys lists at least one key')
  const kids = new Set<string>()
  for (const key of keys) {
    checkKey(key)
    if (kids.has(key.kid)) throw new TypeError(`The signing key kid ${key.kid} is used twice`)
    kids.add(key.kid)
  }
}

/**
 * Imports the keys (checked by {@link checkSigningKeys}): the first signs.
 *
 * @example
 * ```ts
 * const keys = await loadKeySet(signingKeys)
 * keys.jwks // { keys: [{ kty, crv, x, y, kid, alg, use }] }
 * ```
 */
export async function loadKeySet(keys: readonly SigningKey[]): Promise<KeySet> {
  const loaded: LoadedKey[] = []
  for (const key of keys) {
    const publicJwk = publicMembers(key.privateJwk, key.kid, key.alg)
    const privateKey = await importJWK({ ...key.privateJwk, alg: key.alg } as JWK, key.alg)
    const publicKey = await importJWK({ ...publicJwk } as JWK, key.alg)
    if (!(privateKey instanceof CryptoKey) || !(publicKey instanceof CryptoKey)) {
      throw new TypeError(`Signing key ${key.kid}: not an asymmetric key`)
    }
    loaded.push({ kid: key.kid, alg: key.alg, privateKey, publicKey, publicJwk })
  }
  return {
    signing: loaded[0]!,
    byKid: new Map(loaded.map((key) => [key.kid, key])),
    jwks: { keys: loaded.map((key) => key.publicJwk) },
    algorithms: [...new Set(loaded.map((key) => key.alg))],
  }
}
