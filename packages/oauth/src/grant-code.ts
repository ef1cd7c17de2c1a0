/**
 * The authorization code grant at the token endpoint (RFC 6749 §4.1.3, RFC 7636 §4.5–4.6,
 * OpenID Connect Core §3.1.3).
 *
 * The code is consumed first, then checked: a code presented with the wrong client, redirect
 * URI or verifier is spent all the same, so an attacker gets one try. A code presented again
 * revokes the family its first exchange issued (RFC 6749 §4.1.2: the server SHOULD revoke the
 * tokens issued from it), even while that exchange is still writing them.
 *
 * @module
 */
import type { OAuthClient } from './clients.ts'
import type { ServerContext } from './context.ts'
import { OAuthError } from './error.ts'
import { type Parameters, parameter } from './form.ts'
import { mintAccessToken, mintIdToken, mintRefreshToken, tokenResponse } from './issue.ts'
import { LIMITS } from './limits.ts'
import { verifyPkce } from './pkce.ts'
import type { FamilyRecord, TokenRecord } from './store.ts'
import { isCodeShape } from './tokens.ts'

const UNKNOWN_CODE = 'The authorization code is invalid, expired or already used.'

/**
 * `grant_type=authorization_code`.
 *
 * @example
 * ```ts
 * return authorizationCodeGrant(context, client, form) // 200 { access_token, id_token, … }
 * ```
 */
export async function authorizationCodeGrant(
  context: ServerContext,
  client: OAuthClient,
  form: Parameters,
): Promise<Response> {
  const code = parameter(form, 'code', LIMITS.code)
  const redirectUri = parameter(form, 'redirect_uri', LIMITS.redirectUri)
  const verifier = parameter(form, 'code_verifier', LIMITS.codeVerifier)
  if (code === undefined) throw new OAuthError('invalid_request', 'The code parameter is missing.')
  // Our profile: redirect_uri is required at the token endpoint (RFC 6749 §4.1.3 requires it
  // whenever the authorization request had it, and ours always has).
  if (redirectUri === undefined) {
    throw new OAuthError('invalid_request', 'The redirect_uri parameter is missing.')
  }
  // RFC 9700 §2.1.1: a verifier is required, since every code has a challenge.
  if (verifier === undefined) {
    throw new OAuthError('invalid_request', 'The code_verifier parameter is missing.')
  }
  if (!isCodeShape(code)) throw new OAuthError('invalid_grant', UNKNOWN_CODE)
  const { clock, ttl, onEvent } = context.options
  const now = clock()
  const consumed = await context.store.consumeCode(await context.hash(code), now)
  if (consumed.state === 'absent') throw new OAuthError('invalid_grant', UNKNOWN_CODE)
  if (consumed.state === 'replayed') {
    // RFC 6749 §4.1.2 / RFC 9700 §4.5: revoke what the first exchange issued. The mark lasts
    // as long as any token of the family could.
    const familyId = consumed.code.familyId
    await context.store.revokeFamily(familyId, now, now + ttl.refreshToken * 1000)
    onEvent({
      type: 'code_replayed',
      code: 'INVALID_GRANT',
      clientId: consumed.code.clientId,
      familyId,
    })
    throw new OAuthError('invalid_grant', UNKNOWN_CODE)
  }
  const record = consumed.code
  // RFC 6749 §4.1.3: the code was issued to this client, for this redirect URI.
  if (record.clientId !== client.id) {
    throw new OAuthError('invalid_grant', 'The authorization code was issued to another client.')
  }
  if (record.redirectUri !== redirectUri) {
    throw new OAuthError(
      'invalid_grant',
      'The redirect_uri does not match the authorization request.',
    )
  }
  // RFC 8707 §2.2: a resource at the token endpoint can only name the one authorized.
  const resource = parameter(form, 'resource', LIMITS.resource)
  if (resource !== undefined && resource !== record.resource) {
    throw new OAuthError('invalid_target', 'The resource is not the one authorized.')
  }
  // RFC 7636 §4.6: the verifier's S256 must match the challenge, compared in constant time.
  if (!(await verifyPkce(verifier, record.codeChallenge))) {
    throw new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.')
  }
  const refresh =
    record.scopes.includes('offline_access') && client.grantTypes.includes('refresh_token')
  const family: FamilyRecord = {
    id: record.familyId,
    clientId: client.id,
    subject: record.subject,
    scopes: record.scopes,
    resource: record.resource,
    authTime: record.authTime,
    createdAt: now,
    // A grant with a refresh token lives as long as refresh tokens do; one without, as long as
    // its access token.
    expiresAt:
      now +
      (refresh
        ? ttl.refreshToken * 1000
        : Math.max(...context.options.resources.map((r) => r.accessTokenTtlSeconds)) * 1000),
  }
  const access = await mintAccessToken(context, family, now)
  const tokens: TokenRecord[] = [access.record]
  const refreshToken = refresh ? await mintRefreshToken(context, family, now) : undefined
  if (refreshToken !== undefined) tokens.push(refreshToken.record)
  // Minted before anything is saved: a signing or findAccount failure leaves no tokens in the
  // store that nobody received.
  const idToken = record.scopes.includes('openid')
    ? await mintIdToken(context, family, record.nonce, now)
    : undefined
  // A replay of the code may have revoked the family already: then nothing is issued.
  if ((await context.store.issue(family, tokens, now)) === 'revoked') {
    throw new OAuthError('invalid_grant', UNKNOWN_CODE)
  }
  onEvent({
    type: 'token_issued',
    grantType: 'authorization_code',
    clientId: client.id,
    familyId: family.id,
    subject: record.subject,
  })
  return tokenResponse(access, family, now, { refreshToken: refreshToken?.token, idToken })
}
