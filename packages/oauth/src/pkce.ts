/**
 * PKCE (RFC 7636) with the S256 method only: `plain` adds nothing against a code stolen from
 * the authorization response, and RFC 9700 §2.1.1 and OAuth 2.1 ask for S256.
 *
 * @module
 */
import { sha256Base64url, timingSafeEqual } from '@api-blocks/core/crypto'

// RFC 7636 §4.1: code_verifier = 43*128unreserved, unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/
// RFC 7636 §4.2: the S256 challenge is BASE64URL(SHA256(verifier)): exactly 43 characters.
const CHALLENGE = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/

/**
 * Whether `challenge` can be an S256 code challenge: 43 base64url characters, the canonical
 * encoding of 32 bytes.
 *
 * @example
 * ```ts
 * isS256Challenge('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM') // true
 * ```
 */
export function isS256Challenge(challenge: string): boolean {
  return CHALLENGE.test(challenge)
}

/**
 * Whether `verifier` has the syntax of RFC 7636 §4.1.
 *
 * @example
 * ```ts
 * isCodeVerifier('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk') // true
 * ```
 */
export function isCodeVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier)
}

/**
 * The S256 challenge of `verifier` (RFC 7636 §4.2).
 *
 * @example
 * ```ts
 * await s256Challenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')
 * // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' (RFC 7636 Appendix B)
 * ```
 */
export function s256Challenge(verifier: string): Promise<string> {
  return sha256Base64url(verifier)
}

const encoder = new TextEncoder()

/**
 * RFC 7636 §4.6: whether `verifier` is well formed and its S256 challenge equals `challenge`,
 * compared in constant time.
 *
 * @example
 * ```ts
 * await verifyPkce('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM') // true
 * ```
 */
export async function verifyPkce(verifier: string, challenge: string): Promise<boolean> {
  if (!isCodeVerifier(verifier)) return false
  const computed = encoder.encode(await s256Challenge(verifier))
  return timingSafeEqual(computed, encoder.encode(challenge))
}
