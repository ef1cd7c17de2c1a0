/**
 * Minting tokens for a grant: access tokens (opaque or RFC 9068 JWT, as the resource says),
 * refresh tokens, ID tokens (OpenID Connect Core §2), and the token response (RFC 6749 §5.1).
 *
 * @module
 */
import { releasedClaims } from './account.ts'
import type { ServerContext } from './context.ts'
import { signJwt } from './jwt.ts'
import { noStoreJson } from './responses.ts'
import type { FamilyRecord, TokenRecord } from './store.ts'
import { opaqueToken, randomId } from './tokens.ts'

/**
 * A token and the record the store keeps of it.
 *
 * @example
 * ```ts
 * const { token, record }: Minted = await mintAccessToken(context, family, now)
 * ```
 */
export interface Minted {
  readonly token: string
  readonly record: TokenRecord
}

/** The resource configuration of a family's audience (the first when it is no longer configured). */
function resourceOf(context: ServerContext, family: FamilyRecord) {
  const { resources } = context.options
  return resources.find((resource) => resource.identifier === family.resource) ?? resources[0]!
}

/**
 * A new access token of `family`: opaque `<familyId>.<secret>` or a signed JWT (RFC 9068 §2),
 * stored by the hash of the token or of its `jti`. It never outlives the family.
 *
 * @example
 * ```ts
 * const access = await mintAccessToken(context, family, now)
 * ```
 */
export async function mintAccessToken(
  context: ServerContext,
  family: FamilyRecord,
  now: number,
  scopes?: readonly string[],
): Promise<Minted> {
  const resource = resourceOf(context, family)
  // RFC 6749 §6: a refresh may ask for fewer scopes; the token records them when narrower.
  const own = narrower(scopes, family.scopes)
  const expiresAt = Math.min(now + resource.accessTokenTtlSeconds * 1000, family.expiresAt)
  const { random, issuer } = context.options
  if (resource.accessTokenFormat === 'jwt') {
    // The jti names the family, so introspection and revocation find the token's record.
    const jti = `${family.id}.${randomId(random)}`
    const claims: Record<string, unknown> = {
      iss: issuer,
      sub: family.subject ?? family.clientId,
      aud: family.resource,
      exp: Math.floor(expiresAt / 1000),
      iat: Math.floor(now / 1000),
      jti,
      client_id: family.clientId,
      scope: (own ?? family.scopes).join(' '),
    }
    if (family.authTime !== undefined) claims['auth_time'] = family.authTime
    const token = await signJwt(await context.keys(), 'at+jwt', claims)
    const record: TokenRecord = {
      tokenHash: await context.hash(jti),
      kind: 'access_token',
      familyId: family.id,
      jti,
      issuedAt: now,
      expiresAt,
      ...(own === undefined ? {} : { scopes: own }),
    }
    return { token, record }
  }
  const token = opaqueToken(family.id, random)
  const record: TokenRecord = {
    tokenHash: await context.hash(token),
    kind: 'access_token',
    familyId: family.id,
    jti: randomId(random),
    issuedAt: now,
    expiresAt,
    ...(own === undefined ? {} : { scopes: own }),
  }
  return { token, record }
}

/** `scopes` when they are fewer than the family's, else `undefined` (the family's). */
function narrower(
  scopes: readonly string[] | undefined,
  granted: readonly string[],
): readonly string[] | undefined {
  if (scopes === undefined || granted.every((scope) => scopes.includes(scope))) return undefined
  return [...scopes]
}

/**
 * The scopes of a token: its own when narrower than its family's, else the family's.
 *
 * @example
 * ```ts
 * tokenScopes(active.token, active.family).join(' ')
 * ```
 */
export function tokenScopes(token: TokenRecord, family: FamilyRecord): readonly string[] {
  return token.scopes ?? family.scopes
}

/**
 * A new refresh token of `family`, living until the end of the family or the refresh TTL.
 *
 * @example
 * ```ts
 * const refresh = await mintRefreshToken(context, family, now)
 * ```
 */
export async function mintRefreshToken(
  context: ServerContext,
  family: FamilyRecord,
  now: number,
  scopes?: readonly string[],
): Promise<Minted> {
  const { random, ttl } = context.options
  const own = narrower(scopes, family.scopes)
  const token = opaqueToken(family.id, random)
  const record: TokenRecord = {
    tokenHash: await context.hash(token),
    kind: 'refresh_token',
    familyId: family.id,
    jti: randomId(random),
    issuedAt: now,
    // The family's end bounds every rotation: the grant never outlives its first refresh TTL.
    expiresAt: Math.min(now + ttl.refreshToken * 1000, family.expiresAt),
    ...(own === undefined ? {} : { scopes: own }),
  }
  return { token, record }
}

/**
 * An ID token (OpenID Connect Core §2, §3.1.3.6) for the family's user: `iss`, `sub`, `aud`
 * (the client), `exp`, `iat`, `auth_time`, `nonce`, and the claims its scopes release.
 *
 * @example
 * ```ts
 * const idToken = await mintIdToken(context, family, 'n-0S6_WzA2Mj', now)
 * ```
 */
export async function mintIdToken(
  context: ServerContext,
  family: FamilyRecord,
  nonce: string | undefined,
  now: number,
): Promise<string> {
  const { issuer, ttl, findAccount } = context.options
  const subject = family.subject!
  const account = findAccount === undefined ? undefined : await findAccount(subject)
  const claims: Record<string, unknown> = {
    ...releasedClaims(account, family.scopes),
    iss: issuer,
    sub: subject,
    aud: family.clientId,
    exp: Math.floor(now / 1000) + ttl.idToken,
    iat: Math.floor(now / 1000),
  }
  if (family.authTime !== undefined) claims['auth_time'] = family.authTime
  if (nonce !== undefined) claims['nonce'] = nonce
  return signJwt(await context.keys(), 'JWT', claims)
}

/**
 * The successful token response (RFC 6749 §5.1), never cached.
 *
 * @example
 * ```ts
 * return tokenResponse(access, family, now, { refreshToken: refresh.token })
 * ```
 */
export function tokenResponse(
  access: Minted,
  family: FamilyRecord,
  now: number,
  extra: { refreshToken?: string | undefined; idToken?: string | undefined },
): Response {
  const body: Record<string, unknown> = {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: Math.max(0, Math.floor((access.record.expiresAt - now) / 1000)),
    scope: tokenScopes(access.record, family).join(' '),
  }
  if (extra.refreshToken !== undefined) body['refresh_token'] = extra.refreshToken
  if (extra.idToken !== undefined) body['id_token'] = extra.idToken
  return noStoreJson(body)
}
