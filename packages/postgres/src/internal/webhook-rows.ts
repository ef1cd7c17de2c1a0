/**
 * Rows of the webhook tables to the records of `@api-blocks/webhooks` and back. Times go
 * through `Number()` (`pg` and PGlite parse `double precision` to a number; a caller that
 * changed the type parser still gets one); `jsonb` arrives parsed, or as text when a caller
 * changed its parser, and both are read. A value no version of the stores writes is a
 * {@link RowError}, which the stores report as `UNEXPECTED_ROW`.
 *
 * @module
 */
import type {
  AttemptRecord,
  Delivery,
  DeliveryStatus,
  EndpointSecret,
  LeasedDelivery,
  WebhookEndpoint,
} from '@api-blocks/webhooks'
import { finite, RowError } from './oauth-rows.ts'

type Row = Record<string, unknown>

function text(row: Row, column: string): string {
  const value = row[column]
  if (typeof value !== 'string') throw new RowError(column)
  return value
}

function nullableText(row: Row, column: string): string | null {
  const value = row[column]
  return value === null || value === undefined ? null : text(row, column)
}

function number(value: unknown, column: string): number {
  const parsed = typeof value === 'string' ? Number(value) : value
  if (typeof parsed !== 'number' || !Number.isFinite(parsed)) throw new RowError(column)
  return parsed
}

function json(row: Row, column: string): unknown {
  const value = row[column]
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    throw new RowError(column)
  }
}

function nullableNumber(value: unknown, column: string): number | null {
  return value === null || value === undefined ? null : number(value, column)
}

function secretsOf(row: Row): EndpointSecret[] {
  const value = json(row, 'secrets')
  if (!Array.isArray(value)) throw new RowError('secrets')
  return value.map((item: unknown) => {
    const secret = item as Record<string, unknown> | null
    if (secret === null || typeof secret !== 'object' || typeof secret['value'] !== 'string') {
      throw new RowError('secrets')
    }
    return {
      value: secret['value'],
      createdAt: number(secret['createdAt'], 'secrets'),
      expiresAt: nullableNumber(secret['expiresAt'], 'secrets'),
    }
  })
}

/** The columns of an endpoint, in the order {@link endpointParams} gives them. */
export const ENDPOINT_COLUMNS =
  'id, url, events, status, disabled_reason, secrets, owner, created_at, updated_at, version'

/** An endpoint row as a {@link WebhookEndpoint}. */
export function endpointOf(row: Row): WebhookEndpoint {
  const events = row['events']
  if (
    events !== null &&
    (!Array.isArray(events) || !events.every((event) => typeof event === 'string'))
  ) {
    throw new RowError('events')
  }
  const status = text(row, 'status')
  if (status !== 'enabled' && status !== 'disabled') throw new RowError('status')
  return {
    id: text(row, 'id'),
    url: text(row, 'url'),
    events: events as string[] | null,
    status,
    disabledReason: nullableText(row, 'disabled_reason'),
    secrets: secretsOf(row),
    owner: nullableText(row, 'owner'),
    createdAt: number(row['created_at'], 'created_at'),
    updatedAt: number(row['updated_at'], 'updated_at'),
    version: number(row['version'], 'version'),
  }
}

/** A whole number of at least `min`, or a RangeError naming it. */
export function whole(value: number, name: string, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`${name} must be a whole number >= ${min}, got ${String(value)}`)
  }
  return value
}

/** The secrets as the `jsonb` parameter the statements take. */
export function secretsParam(secrets: readonly EndpointSecret[]): string {
  return JSON.stringify(
    secrets.map(({ value, createdAt, expiresAt }) => ({
      value,
      createdAt: finite(createdAt, 'secret.createdAt'),
      expiresAt: expiresAt === null ? null : finite(expiresAt, 'secret.expiresAt'),
    })),
  )
}

/** The parameters $1..$10 of an endpoint's insert, in {@link ENDPOINT_COLUMNS} order. */
export function endpointParams(endpoint: WebhookEndpoint): unknown[] {
  return [
    endpoint.id,
    endpoint.url,
    endpoint.events === null ? null : [...endpoint.events],
    endpoint.status,
    endpoint.disabledReason,
    secretsParam(endpoint.secrets),
    endpoint.owner,
    finite(endpoint.createdAt, 'createdAt'),
    finite(endpoint.updatedAt, 'updatedAt'),
    whole(endpoint.version, 'version', 0),
  ]
}

/** The columns of a delivery (a leased one adds `lease` and `lease_expires_at`). */
export const DELIVERY_COLUMNS =
  'event_id, endpoint_id, event_type, payload, created_at, next_attempt_at, status, attempts, log, updated_at'

const STATUSES: ReadonlySet<string> = new Set(['pending', 'succeeded', 'failed', 'dead'])

function attemptOf(item: unknown): AttemptRecord {
  const line = item as Record<string, unknown> | null
  if (line === null || typeof line !== 'object') throw new RowError('log')
  const failure = line['failure']
  const body = line['body']
  if (failure !== null && typeof failure !== 'string') throw new RowError('log')
  if (body !== null && typeof body !== 'string') throw new RowError('log')
  return {
    attempt: number(line['attempt'], 'log'),
    at: number(line['at'], 'log'),
    latencyMs: number(line['latencyMs'], 'log'),
    status: nullableNumber(line['status'], 'log'),
    failure,
    body,
  }
}

/** A delivery row as a {@link Delivery}. */
export function deliveryOf(row: Row): Delivery {
  const status = text(row, 'status')
  if (!STATUSES.has(status)) throw new RowError('status')
  const log = json(row, 'log')
  if (!Array.isArray(log)) throw new RowError('log')
  return {
    eventId: text(row, 'event_id'),
    eventType: text(row, 'event_type'),
    endpointId: text(row, 'endpoint_id'),
    payload: text(row, 'payload'),
    createdAt: number(row['created_at'], 'created_at'),
    nextAttemptAt: number(row['next_attempt_at'], 'next_attempt_at'),
    status: status as DeliveryStatus,
    attempts: number(row['attempts'], 'attempts'),
    log: log.map(attemptOf),
    updatedAt: number(row['updated_at'], 'updated_at'),
  }
}

/** A delivery row with its lease as a {@link LeasedDelivery}. */
export function leasedOf(row: Row): LeasedDelivery {
  return {
    ...deliveryOf(row),
    lease: text(row, 'lease'),
    leaseExpiresAt: number(row['lease_expires_at'], 'lease_expires_at'),
  }
}

// A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * `value` as text a `jsonb` column accepts: PostgreSQL refuses the escape `\u0000` in `jsonb`
 * ("unsupported Unicode escape sequence", its text type cannot hold NUL) and a lone surrogate
 * escape (not a Unicode scalar value, RFC 8259 §8.2), so each becomes U+FFFD, the replacement
 * character (what `String.prototype.toWellFormed` does to a lone surrogate). A receiver's
 * answer is arbitrary text: without this, its attempt could never be settled.
 */
function jsonbText(value: string | null): string | null {
  return value === null
    ? null
    : value.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD')
}

/**
 * One attempt record as the `jsonb` array of one line that a settle appends; `failure` and
 * `body` with NUL and lone surrogates replaced by U+FFFD (see {@link jsonbText}).
 */
export function attemptParam(attempt: AttemptRecord): string {
  const { status } = attempt
  const failure = jsonbText(attempt.failure)
  const body = jsonbText(attempt.body)
  return JSON.stringify([
    {
      attempt: whole(attempt.attempt, 'attempt.attempt', 0),
      at: finite(attempt.at, 'attempt.at'),
      latencyMs: finite(attempt.latencyMs, 'attempt.latencyMs'),
      status: status === null ? null : whole(status, 'attempt.status', 0),
      failure,
      body,
    },
  ])
}
