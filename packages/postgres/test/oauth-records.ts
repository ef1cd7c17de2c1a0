// Records for the OAuth store's tests: fresh ids and hashes on every call, so tests sharing a
// schema never meet.
import type { CodeRecord, FamilyRecord, InteractionRecord, TokenRecord } from '@api-blocks/oauth'

export const T0: number = 1_700_000_000_000
export const MINUTE: number = 60_000
export const DAY: number = 24 * 60 * MINUTE

export const id = (): string => crypto.randomUUID().replaceAll('-', '')

export function interaction(overrides: Partial<InteractionRecord> = {}): InteractionRecord {
  return {
    id: id(),
    clientId: 'client-1',
    redirectUri: 'https://client.example/cb',
    scopes: ['openid', 'read:orders'],
    state: 'st',
    nonce: 'n-1',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    resource: 'https://api.example/',
    bindingHash: 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0',
    createdAt: T0,
    expiresAt: T0 + 10 * MINUTE,
    ...overrides,
  }
}

export function code(overrides: Partial<CodeRecord> = {}): CodeRecord {
  return {
    codeHash: id(),
    clientId: 'client-1',
    redirectUri: 'https://client.example/cb',
    subject: 'alice',
    scopes: ['openid', 'offline_access'],
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    authTime: T0 / 1000,
    resource: 'https://api.example/',
    familyId: id(),
    expiresAt: T0 + MINUTE,
    ...overrides,
  }
}

export function family(overrides: Partial<FamilyRecord> = {}): FamilyRecord {
  return {
    id: id(),
    clientId: 'client-1',
    subject: 'alice',
    scopes: ['read:orders', 'offline_access'],
    resource: 'https://api.example/',
    authTime: T0 / 1000,
    createdAt: T0,
    expiresAt: T0 + 14 * DAY,
    ...overrides,
  }
}

export function token(
  familyId: string,
  kind: TokenRecord['kind'],
  overrides: Partial<TokenRecord> = {},
): TokenRecord {
  return {
    tokenHash: id(),
    kind,
    familyId,
    jti: id(),
    issuedAt: T0,
    expiresAt: T0 + (kind === 'refresh_token' ? DAY : 15 * MINUTE),
    ...overrides,
  }
}
