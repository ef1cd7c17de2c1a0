/**
 * What the conformance cases share: the registered-test helper, fresh random ids, the clock
 * origin, and record fixtures.
 *
 * @module
 */
import { encodeBase64url } from '@api-blocks/core'
import { expect } from 'vitest'
import type {
  CodeRecord,
  FamilyRecord,
  InteractionRecord,
  OAuthStore,
  TokenRecord,
} from '../store.ts'

/** What each group of cases receives from `runOAuthStoreConformance`. */
export interface SuiteContext {
  /** Registers one test that runs with a fresh store (then cleaned up). */
  readonly it: (title: string, body: (store: OAuthStore) => Promise<void>) => void
  /** The time the injected clock starts at, ms since the epoch. */
  readonly t0: number
  /** How many calls race in the concurrency tests. */
  readonly concurrency: number
}

/** One minute, in ms. */
export const MINUTE = 60_000
/** One day, in ms. */
export const DAY: number = 24 * 60 * MINUTE

/**
 * `bytes` random bytes as base64url without padding (16 bytes: a family or interaction id; 32:
 * a hash), so tests never meet on a shared server.
 */
export function randomId(bytes = 16): string {
  return encodeBase64url(crypto.getRandomValues(new Uint8Array(bytes)))
}

/** Checks that `answer` is a Promise before it is awaited (the contract: always a Promise). */
export function promised<T>(answer: Promise<T>): Promise<T> {
  expect(answer).toBeInstanceOf(Promise)
  return answer
}

/** An interaction created at `now`, living 10 minutes. */
export function interactionAt(
  now: number,
  extra: Partial<InteractionRecord> = {},
): InteractionRecord {
  return {
    id: randomId(),
    clientId: 'client-1',
    redirectUri: 'https://client.example/callback?x=1&y=%20',
    scopes: ['openid', 'read:orders', 'offline_access'],
    state: 'af0ifjsldkj',
    nonce: 'n-0S6_WzA2Mj',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    resource: 'https://api.example/',
    bindingHash: randomId(32),
    prompt: ['login', 'consent'],
    maxAge: 300,
    loginHint: 'ada@example.com',
    createdAt: now,
    expiresAt: now + 10 * MINUTE,
    ...extra,
  }
}

/** A code made at `now`, living one minute, for the family `familyId`. */
export function codeAt(now: number, extra: Partial<CodeRecord> = {}): CodeRecord {
  return {
    codeHash: randomId(32),
    clientId: 'client-1',
    redirectUri: 'https://client.example/callback',
    subject: 'user-ü-42',
    scopes: ['openid', 'write:orders', 'read:orders'],
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    nonce: 'n-0S6_WzA2Mj',
    authTime: Math.floor(now / 1000) - 5,
    resource: 'https://api.example/',
    familyId: randomId(),
    expiresAt: now + MINUTE,
    ...extra,
  }
}

/** A family created at `now`, living 14 days. */
export function familyAt(now: number, extra: Partial<FamilyRecord> = {}): FamilyRecord {
  return {
    id: randomId(),
    clientId: 'client-1',
    subject: 'user-42',
    scopes: ['openid', 'read:orders', 'offline_access'],
    resource: 'https://api.example/',
    authTime: Math.floor(now / 1000) - 5,
    createdAt: now,
    expiresAt: now + 14 * DAY,
    ...extra,
  }
}

/** An access token (15 minutes) of `family`, issued at `now`. */
export function accessToken(
  family: FamilyRecord,
  now: number,
  extra: Partial<TokenRecord> = {},
): TokenRecord {
  return {
    tokenHash: randomId(32),
    kind: 'access_token',
    familyId: family.id,
    jti: randomId(),
    issuedAt: now,
    expiresAt: Math.min(now + 15 * MINUTE, family.expiresAt),
    ...extra,
  }
}

/** A refresh token (until the family ends) of `family`, issued at `now`. */
export function refreshToken(
  family: FamilyRecord,
  now: number,
  extra: Partial<TokenRecord> = {},
): TokenRecord {
  return {
    tokenHash: randomId(32),
    kind: 'refresh_token',
    familyId: family.id,
    jti: randomId(),
    issuedAt: now,
    expiresAt: family.expiresAt,
    ...extra,
  }
}

/** What a rotation saves: a new access token and a new refresh token. */
export function pairAt(family: FamilyRecord, now: number): [TokenRecord, TokenRecord] {
  return [accessToken(family, now), refreshToken(family, now)]
}

/** Whether `token` of `family` is active at `now`. */
export async function active(store: OAuthStore, token: TokenRecord, now: number): Promise<boolean> {
  return (await store.findToken(token.familyId, token.tokenHash, now)) !== undefined
}

/** Counts each answer of `answers` (`state` of objects, the value itself otherwise). */
export function tally(answers: readonly unknown[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const answer of answers) {
    const name =
      typeof answer === 'object' && answer !== null && 'state' in answer
        ? String(answer.state)
        : String(answer)
    counts[name] = (counts[name] ?? 0) + 1
  }
  return counts
}
