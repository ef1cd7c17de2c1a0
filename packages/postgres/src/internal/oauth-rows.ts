/**
 * Rows of the OAuth tables to the records of `@api-blocks/oauth` and back. Columns that may be
 * NULL become absent properties, never `undefined` ones or nulls, so a record read back equals
 * the one saved. Times go through `Number()`: `pg` and PGlite parse `double precision` to a
 * number, and a caller that changed the type parser still gets one.
 *
 * @module
 */
import type { CodeRecord, FamilyRecord, InteractionRecord, TokenRecord } from '@api-blocks/oauth'

type Row = Record<string, unknown>

/** A finite number, or a TypeError naming it (NaN or Infinity would compare wrongly in SQL). */
export function finite(value: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${name} must be a finite number, got ${String(value)}`)
  }
  return value
}

function text(row: Row, column: string): string {
  const value = row[column]
  if (typeof value !== 'string') throw new RowError(column)
  return value
}

function optionalText(row: Row, column: string): string | undefined {
  const value = row[column]
  return value === null || value === undefined ? undefined : text(row, column)
}

function time(row: Row, column: string): number {
  const value = row[column]
  const number = typeof value === 'string' ? Number(value) : value
  if (typeof number !== 'number' || !Number.isFinite(number)) throw new RowError(column)
  return number
}

function optionalTime(row: Row, column: string): number | undefined {
  const value = row[column]
  return value === null || value === undefined ? undefined : time(row, column)
}

function texts(row: Row, column: string): readonly string[] {
  const value = row[column]
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new RowError(column)
  }
  return value
}

/** A row no version of the store writes; the store reports it as `UNEXPECTED_ROW`. */
export class RowError extends Error {
  constructor(column: string) {
    super(`unexpected value in column ${column}`)
  }
}

/** The parameters $1..$14 of saveInteraction. */
export function interactionParams(record: InteractionRecord): unknown[] {
  return [
    record.id,
    record.clientId,
    record.redirectUri,
    [...record.scopes],
    record.state,
    record.nonce ?? null,
    record.codeChallenge,
    record.resource,
    finite(record.createdAt, 'createdAt'),
    finite(record.expiresAt, 'expiresAt'),
    record.bindingHash,
    record.prompt === undefined ? null : [...record.prompt],
    record.maxAge === undefined ? null : finite(record.maxAge, 'maxAge'),
    record.loginHint ?? null,
  ]
}

function optionalTexts(row: Row, column: string): readonly string[] | undefined {
  const value = row[column]
  return value === null || value === undefined ? undefined : texts(row, column)
}

export function interactionOf(row: Row): InteractionRecord {
  const nonce = optionalText(row, 'nonce')
  const prompt = optionalTexts(row, 'prompt')
  const maxAge = optionalTime(row, 'max_age')
  const loginHint = optionalText(row, 'login_hint')
  return {
    id: text(row, 'id'),
    clientId: text(row, 'client_id'),
    redirectUri: text(row, 'redirect_uri'),
    scopes: texts(row, 'scopes'),
    state: text(row, 'state'),
    ...(nonce === undefined ? {} : { nonce }),
    codeChallenge: text(row, 'code_challenge'),
    resource: text(row, 'resource'),
    bindingHash: text(row, 'binding_hash'),
    ...(prompt === undefined ? {} : { prompt }),
    ...(maxAge === undefined ? {} : { maxAge }),
    ...(loginHint === undefined ? {} : { loginHint }),
    createdAt: time(row, 'created_at'),
    expiresAt: time(row, 'expires_at'),
  }
}

/** The parameters $1..$11 of saveCode. */
export function codeParams(record: CodeRecord): unknown[] {
  return [
    record.codeHash,
    record.clientId,
    record.redirectUri,
    record.subject,
    [...record.scopes],
    record.codeChallenge,
    record.nonce ?? null,
    finite(record.authTime, 'authTime'),
    record.resource,
    record.familyId,
    finite(record.expiresAt, 'expiresAt'),
  ]
}

export function codeOf(row: Row): CodeRecord {
  const nonce = optionalText(row, 'nonce')
  return {
    codeHash: text(row, 'code_hash'),
    clientId: text(row, 'client_id'),
    redirectUri: text(row, 'redirect_uri'),
    subject: text(row, 'subject'),
    scopes: texts(row, 'scopes'),
    codeChallenge: text(row, 'code_challenge'),
    ...(nonce === undefined ? {} : { nonce }),
    authTime: time(row, 'auth_time'),
    resource: text(row, 'resource'),
    familyId: text(row, 'family_id'),
    expiresAt: time(row, 'expires_at'),
  }
}

/** The parameters $1..$8 of issue (the family). */
export function familyParams(record: FamilyRecord): unknown[] {
  return [
    record.id,
    record.clientId,
    record.subject ?? null,
    [...record.scopes],
    record.resource,
    record.authTime === undefined ? null : finite(record.authTime, 'authTime'),
    finite(record.createdAt, 'createdAt'),
    finite(record.expiresAt, 'expiresAt'),
  ]
}

/** The family of a findToken or rotateRefresh row (columns `family_…`). */
export function familyOf(row: Row): FamilyRecord {
  const subject = optionalText(row, 'family_subject')
  const authTime = optionalTime(row, 'family_auth_time')
  return {
    id: text(row, 'family_id'),
    clientId: text(row, 'family_client_id'),
    ...(subject === undefined ? {} : { subject }),
    scopes: texts(row, 'family_scopes'),
    resource: text(row, 'family_resource'),
    ...(authTime === undefined ? {} : { authTime }),
    createdAt: time(row, 'family_created_at'),
    expiresAt: time(row, 'family_expires_at'),
  }
}

/**
 * The tokens as the JSON array parameter of issue and rotateRefresh. Their `familyId` is not
 * sent: the statements save every token under the family they write, as the memory store does.
 */
export function tokensParam(records: readonly TokenRecord[]): string {
  return JSON.stringify(
    records.map((record) => {
      if (record.kind !== 'access_token' && record.kind !== 'refresh_token') {
        throw new TypeError(`token kind must be access_token or refresh_token`)
      }
      return {
        token_hash: record.tokenHash,
        kind: record.kind,
        jti: record.jti,
        issued_at: finite(record.issuedAt, 'issuedAt'),
        expires_at: finite(record.expiresAt, 'expiresAt'),
        confirmation: record.confirmation ?? null,
        scopes: record.scopes === undefined ? null : [...record.scopes],
      }
    }),
  )
}

function confirmationOf(row: Row): Readonly<Record<string, string>> | undefined {
  let value = row['confirmation']
  if (value === null || value === undefined) return undefined
  // jsonb arrives parsed (pg and PGlite), or as text when a caller changed the type parser.
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value)
    } catch {
      throw new RowError('confirmation')
    }
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    !Object.values(value).every((item) => typeof item === 'string')
  ) {
    throw new RowError('confirmation')
  }
  return value as Record<string, string>
}

/** The token of a findToken row. */
export function tokenOf(row: Row): TokenRecord {
  const kind = text(row, 'kind')
  if (kind !== 'access_token' && kind !== 'refresh_token') throw new RowError('kind')
  const confirmation = confirmationOf(row)
  const scopes = optionalTexts(row, 'scopes')
  return {
    tokenHash: text(row, 'token_hash'),
    kind,
    familyId: text(row, 'family_id'),
    jti: text(row, 'jti'),
    issuedAt: time(row, 'issued_at'),
    expiresAt: time(row, 'expires_at'),
    ...(scopes === undefined ? {} : { scopes }),
    ...(confirmation === undefined ? {} : { confirmation }),
  }
}
