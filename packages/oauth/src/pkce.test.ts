import { describe, expect, test } from 'vitest'
import { isCodeVerifier, isS256Challenge, s256Challenge, verifyPkce } from './pkce.ts'
import { RFC7636_APPENDIX_B } from './testing/vectors/rfc7636.ts'

describe('PKCE S256 (RFC 7636)', () => {
  test('the RFC 7636 Appendix B vector', async () => {
    expect(await s256Challenge(RFC7636_APPENDIX_B.verifier)).toBe(RFC7636_APPENDIX_B.challenge)
    expect(await verifyPkce(RFC7636_APPENDIX_B.verifier, RFC7636_APPENDIX_B.challenge)).toBe(true)
    expect(isS256Challenge(RFC7636_APPENDIX_B.challenge)).toBe(true)
  })

  test('a verifier MUST be 43 to 128 unreserved characters (§4.1)', () => {
    expect(isCodeVerifier('a'.repeat(43))).toBe(true)
    expect(isCodeVerifier('a'.repeat(128))).toBe(true)
    expect(isCodeVerifier('A-._~z0'.padEnd(43, '9'))).toBe(true)
    expect(isCodeVerifier('a'.repeat(42))).toBe(false)
    expect(isCodeVerifier('a'.repeat(129))).toBe(false)
    expect(isCodeVerifier(`${'a'.repeat(42)}+`)).toBe(false)
    expect(isCodeVerifier(`${'a'.repeat(42)} `)).toBe(false)
  })

  test('the plain method is not S256: the verifier as challenge does not verify', async () => {
    expect(await verifyPkce(RFC7636_APPENDIX_B.verifier, RFC7636_APPENDIX_B.verifier)).toBe(false)
  })

  test('a malformed verifier never verifies', async () => {
    expect(await verifyPkce('short', RFC7636_APPENDIX_B.challenge)).toBe(false)
  })

  test('a challenge is exactly the canonical base64url of 32 bytes', () => {
    expect(isS256Challenge(RFC7636_APPENDIX_B.challenge.slice(1))).toBe(false)
    expect(isS256Challenge(`${RFC7636_APPENDIX_B.challenge}A`)).toBe(false)
    // Last character with non-zero pad bits: not canonical.
    expect(isS256Challenge(`${RFC7636_APPENDIX_B.challenge.slice(0, 42)}N`)).toBe(false)
    expect(isS256Challenge(`${RFC7636_APPENDIX_B.challenge.slice(0, 42)}=`)).toBe(false)
  })
})
