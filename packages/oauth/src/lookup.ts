/**
 * Finding a presented token's record: an opaque token by its family id and keyed hash; a JWT
 * access token by its signature (this server's keys), then its `jti`. Malformed tokens are
 * answered without asking the store.
 *
 * @module
 */
import type { ServerContext } from './context.ts'
import { verifyOwnAccessToken } from './jwt.ts'
import { LIMITS } from './limits.ts'
import type { ActiveToken } from './store.ts'
import { familyOfOpaqueToken, isIdShape } from './tokens.ts'

/**
 * An active token, with what the store knows it by.
 *
 * @example
 * ```ts
 * const found: FoundToken | undefined = await findActiveToken(context, token, now)
 * ```
 */
export interface FoundToken {
  readonly active: ActiveToken
  readonly familyId: string
  readonly tokenHash: string
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/**
 * The token's record when it is active at `now`, else `undefined`.
 *
 * @example
 * ```ts
 * const found = await findActiveToken(context, token, Date.now())
 * if (found?.active.token.kind === 'refresh_token') console.log(found.familyId)
 * ```
 */
export async function findActiveToken(
  context: ServerContext,
  token: string,
  now: number,
): Promise<FoundToken | undefined> {
  if (token.length > LIMITS.token) return undefined
  let familyId = familyOfOpaqueToken(token)
  let hashed = token
  if (familyId === undefined) {
    if (!JWT_SHAPE.test(token)) return undefined
    const claims = await verifyOwnAccessToken(
      await context.keys(),
      context.options.issuer,
      token,
      now,
    )
    if (claims === undefined) return undefined
    const candidate = claims.jti.slice(0, 22)
    if (claims.jti.length !== 45 || claims.jti[22] !== '.' || !isIdShape(candidate))
      return undefined
    familyId = candidate
    hashed = claims.jti
  }
  const tokenHash = await context.hash(hashed)
  const active = await context.store.findToken(familyId, tokenHash, now)
  if (active === undefined) return undefined
  // A JWT's record is found by its jti; it must be an access token of the same family.
  if (hashed !== token && active.token.kind !== 'access_token') return undefined
  return { active, familyId, tokenHash }
}
