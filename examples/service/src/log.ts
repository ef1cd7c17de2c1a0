// The service's logs: one JSON object a line (pino), pretty-printed when stdout is a terminal.
// What is logged, and at which level (docs/service.md, "Logs"):
// - every answer, one line: 2xx and 3xx at debug, 4xx at info (a client's mistake: no stack),
//   5xx at warn; the error behind a 5xx separately, at error, with its stack and the request id;
// - store failures (idempotency records, rate limits) at error, with the request id; in an
//   outage every request fails the same way, so one in full per ERROR_REPORT_INTERVAL_MS and a
//   count of the rest;
// - what the idempotency block reports (docs/idempotency.md, "Events"): a record lost or not
//   stored at warn, the rest at debug.
import { AsyncLocalStorage } from 'node:async_hooks'
import { isProblemSource } from '@api-blocks/core'
import type { Middleware } from '@api-blocks/http'
import { requestIdOf } from '@api-blocks/http'
import type { IdempotencyEvent } from '@api-blocks/idempotency'
import type { RateLimitEvent } from '@api-blocks/rate-limit'
import type { DeliveryWorkerEvent } from '@api-blocks/webhooks'
import { pino } from 'pino'
import pretty from 'pino-pretty'

// What a database error can quote of the data (PostgreSQL's `detail`: "Failing row contains
// (…)", `where`, `hint`, `internalQuery`), kept out of the logs: a customer's name is not a log
// field. An error's message (and its causes' messages, which pino appends to it) can still
// quote a value ("invalid input syntax for type uuid: …"): messages are logged as they are.
const QUOTED_DATA = ['detail', 'where', 'hint', 'parameters', 'internalQuery', 'internalPosition']

/** pino's error serializer, without the members that quote stored data (aggregated errors too). */
function serializeError(error: unknown): unknown {
  const serialized: unknown =
    error instanceof Error
      ? pino.stdSerializers.err(error)
      : typeof error === 'object' && error !== null
        ? { ...error } // a copy: the thrown object itself is left alone
        : error
  const strip = (value: unknown, depth: number): void => {
    if (typeof value !== 'object' || value === null || depth > 8) return
    const record = value as Record<string, unknown>
    for (const key of QUOTED_DATA) delete record[key]
    const aggregated = record['aggregateErrors']
    if (Array.isArray(aggregated)) for (const each of aggregated) strip(each, depth + 1)
  }
  strip(serialized, 0)
  return serialized
}

/** The levels LOG_LEVEL takes, most severe first (`silent` logs nothing). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

/** What the service logs through: a pino Logger, or anything with these methods. */
export interface Logger {
  error(fields: object, message: string): void
  warn(fields: object, message: string): void
  info(fields: object, message: string): void
  debug(fields: object, message: string): void
  /** Lets the request log skip building a line nobody will see. */
  isLevelEnabled?(level: LogLevel): boolean
}

export interface LoggerOptions {
  /** Default `info`. */
  level?: LogLevel
  /** Human-readable, coloured lines instead of JSON (for a terminal). Default false. */
  pretty?: boolean
  /** Where lines go (default stdout). */
  destination?: { write(line: string): unknown }
}

/** A pino logger: JSON lines (`level` 30 is info, 40 warn, 50 error), or pretty ones. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = { level: options.level ?? 'info', serializers: { err: serializeError } }
  if (options.pretty) {
    return pino(
      settings,
      pretty({
        colorize: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname',
        sync: true,
        ...(options.destination ? { destination: options.destination as never } : {}),
      }),
    )
  }
  return options.destination ? pino(settings, options.destination) : pino(settings)
}

/** Whether `value` is one of {@link LOG_LEVELS}. */
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value)
}

// The request id of the request being served, for the reports that come without their request
// (the blocks' onEvent hooks).
const current = new AsyncLocalStorage<string>()

/**
 * One line per answer (method, path, status, duration, request id) and, around the layers
 * below it, the request id for {@link storeErrorLog} and {@link idempotencyLog}. Goes right
 * after `requestId()`, whose id it reads.
 */
export function requestLog(logger: Logger): Middleware {
  const enabled = (level: LogLevel) => logger.isLevelEnabled?.(level) ?? true
  return async (request, next) => {
    const reqId = requestIdOf(request)
    const started = performance.now()
    const answered = (status: number): void => {
      const level = status >= 500 ? 'warn' : status >= 400 ? 'info' : 'debug'
      if (!enabled(level)) return
      logger[level](
        {
          reqId,
          method: request.method,
          path: pathOf(request.url),
          status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'answered',
      )
    }
    let response: Response
    try {
      response = await (reqId === undefined ? next(request) : current.run(reqId, next, request))
    } catch (error) {
      // Answered by requestId() above by the same rule: its problem's status, else 500.
      let status = 500
      try {
        if (isProblemSource(error)) status = error.toProblem().status ?? 500
      } catch {
        // A problem that cannot be rendered is answered 500 as well.
      }
      answered(status)
      throw error
    }
    answered(response.status)
    return response
  }
}

/** The error behind a 5xx answer (`onError` of `requestId()` and of the node adapter). */
export function errorLog(logger: Logger): (error: unknown, request: Request | undefined) => void {
  return (error, request) => {
    const reqId = request === undefined ? current.getStore() : requestIdOf(request)
    logger.error({ err: error, reqId }, 'request failed')
  }
}

/** One in full per interval; the others in the same interval are counted in the next line. */
export const ERROR_REPORT_INTERVAL_MS = 10_000

/** A store's failures (rate limits: `onEvent` of `rateLimit()`), at most one line an interval. */
function storeErrorLog(
  logger: Logger,
  store: string,
  clock: () => number = Date.now,
): (error: unknown, fields?: object) => void {
  let next = Number.NEGATIVE_INFINITY
  let suppressed = 0
  return (error, fields) => {
    const now = clock()
    if (now < next) {
      suppressed++
      return
    }
    next = now + ERROR_REPORT_INTERVAL_MS
    const line = { err: error, reqId: current.getStore(), store, ...fields, suppressed }
    suppressed = 0
    logger.error(line, `${store} store failed`)
  }
}

/** A failed publish of an order change (src/graphql/changes.ts), at most one line an interval. */
export function pubsubLog(logger: Logger, clock?: () => number): (error: unknown) => void {
  const failed = storeErrorLog(logger, 'pubsub', clock)
  return (error) => failed(error)
}

/** `onEvent` of `rateLimit()`: store failures at error, rejections at debug. */
export function rateLimitLog(
  logger: Logger,
  clock?: () => number,
): (event: RateLimitEvent) => void {
  const failed = storeErrorLog(logger, 'rate-limit', clock)
  return (event) => {
    if (event.type === 'store-error') failed(event.error, { action: event.action })
    else logger.debug({ reqId: current.getStore(), key: event.key }, 'rate limit exceeded')
  }
}

/** What the GraphQL handler and the WebSocket server report (their `onEvent`). */
type GraphQLLogEvent =
  | { readonly type: 'rejected'; readonly code: string }
  | {
      readonly type: 'operation'
      readonly operation: string
      readonly operationName: string | undefined
      readonly cost: number
    }
  | { readonly type: 'refused'; readonly status: number }
  | { readonly type: 'closed'; readonly code: number }

/**
 * `onEvent` of the GraphQL handler and of the WebSocket server: each operation admitted at
 * debug (its type, name and cost), each refusal at info with its code (a refusal can be an HTTP
 * 200, a GraphQL error the client reads, which the request log's level does not tell apart
 * from a success), a WebSocket upgrade refused at capacity at warn, a socket closed at debug.
 */
export function graphqlLog(
  logger: Logger,
  transport: 'http' | 'websocket',
): (event: GraphQLLogEvent) => void {
  return (event) => {
    const reqId = current.getStore()
    switch (event.type) {
      case 'rejected':
        logger.info({ reqId, graphql: { transport, code: event.code } }, 'graphql rejected')
        return
      case 'refused':
        logger.warn({ graphql: { transport, status: event.status } }, 'graphql socket refused')
        return
      case 'closed':
        logger.debug({ graphql: { transport, code: event.code } }, 'graphql socket closed')
        return
      default: {
        if (logger.isLevelEnabled?.('debug') === false) return
        const { operation, operationName, cost } = event
        logger.debug(
          { reqId, graphql: { transport, operation, operationName, cost } },
          'graphql operation',
        )
      }
    }
  }
}

/** `onEvent` of `idempotency()`. */
export function idempotencyLog(
  logger: Logger,
  clock?: () => number,
): (event: IdempotencyEvent) => void {
  const failed = storeErrorLog(logger, 'idempotency', clock)
  return (event) => {
    if (event.type === 'store-error') {
      failed(event.error, { operation: event.operation, storeKey: event.storeKey })
      return
    }
    const { type } = event
    const unkept =
      type === 'lost' ||
      (type === 'released' && (event.reason === 'too-large' || event.reason === 'body-error'))
    // A full store refuses every client (503): the operator must see it.
    const full = type === 'rejected' && event.code === 'STORE_FULL'
    // Two debug events a keyed request (executed, stored): no line built when nobody reads it.
    if (!unkept && !full && logger.isLevelEnabled?.('debug') === false) return
    const { type: _, ...fields } = event
    const line = { reqId: current.getStore(), ...fields }
    // A response sent but not kept (its claim lost, its body too large or broken): a retry with
    // the same key runs the action again. A handler that threw is logged as the 5xx it is.
    if (unkept || full) logger.warn(line, `idempotency ${type}`)
    else logger.debug(line, `idempotency ${type}`)
  }
}

// The path of an absolute URL, without the query (a cursor can be long, and is the client's).
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const query = url.indexOf('?', start)
  return query === -1 ? url.slice(start) : url.slice(start, query)
}

/** What the authorisation server reports (never a token or a secret): what an attack looks like. */
const OAUTH_WARNINGS = new Set([
  'refresh_token_reused',
  'code_replayed',
  'client_authentication_failed',
])

/**
 * The authorisation server's own failures: an endpoint that answered 500 (`server_error`, the
 * store most likely), /authorize answering 503 because the store holds as many interactions as
 * it may (`interaction_store_full`), a client of the registry that breaks the rules
 * (`client_config_invalid`: the configuration's fault, never the caller's).
 */
const OAUTH_FAILURES = new Set(['server_error', 'interaction_store_full', 'client_config_invalid'])

/**
 * The authorisation server's events (`onEvent` of @api-blocks/oauth): its own failures at error
 * (each kind at most once per {@link ERROR_REPORT_INTERVAL_MS}, with a count of the rest, since
 * an outage fails every request alike), a reused refresh token, a replayed code and a failed
 * client authentication at warn (each may be an attack), the rest (a client's mistakes, tokens
 * issued) at debug.
 */
export function oauthLog(
  logger: Logger,
  clock: () => number = Date.now,
): (event: { type: string; error?: unknown }) => void {
  const next = new Map<string, number>()
  const suppressed = new Map<string, number>()
  return (event) => {
    const { error, ...fields } = event
    const line = { reqId: current.getStore(), oauth: fields }
    if (OAUTH_FAILURES.has(event.type)) {
      const now = clock()
      if (now < (next.get(event.type) ?? Number.NEGATIVE_INFINITY)) {
        suppressed.set(event.type, (suppressed.get(event.type) ?? 0) + 1)
        return
      }
      next.set(event.type, now + ERROR_REPORT_INTERVAL_MS)
      const count = suppressed.get(event.type) ?? 0
      suppressed.delete(event.type)
      logger.error(
        { ...line, ...(error !== undefined ? { err: error } : {}), suppressed: count },
        `oauth: ${event.type}`,
      )
    } else if (OAUTH_WARNINGS.has(event.type)) logger.warn(line, `oauth: ${event.type}`)
    else logger.debug(line, `oauth: ${event.type}`)
  }
}

/**
 * What the webhook delivery worker reports (`onEvent` of createDeliveryWorker): each attempt at
 * debug (a failed one at info: the receiver's problem, not the service's), a dead letter and an
 * endpoint disabled (a 410) at warn, a store failure at error (at most one in full per
 * {@link ERROR_REPORT_INTERVAL_MS}). Never a payload, a secret or a URL's query.
 */
export function webhookLog(
  logger: Logger,
  clock?: () => number,
): (event: DeliveryWorkerEvent) => void {
  const failed = storeErrorLog(logger, 'webhooks', clock)
  return (event) => {
    switch (event.type) {
      case 'attempt': {
        const { record } = event
        const line = {
          webhook: {
            eventId: event.eventId,
            endpointId: event.endpointId,
            attempt: record.attempt,
            status: record.status,
            failure: record.failure,
            latencyMs: record.latencyMs,
            next: event.resolution.status,
            settled: event.settled,
          },
        }
        if (event.resolution.status === 'succeeded') logger.debug(line, 'webhook delivered')
        else logger.info(line, 'webhook attempt failed')
        return
      }
      case 'dead-letter':
        logger.warn({ webhook: { ...event } }, 'webhook dead-lettered')
        return
      case 'endpoint-disabled':
        logger.warn({ webhook: { ...event } }, 'webhook endpoint disabled')
        return
      default:
        failed(event.error, {
          stage: event.stage,
          ...(event.eventId ? { eventId: event.eventId } : {}),
          ...(event.endpointId ? { endpointId: event.endpointId } : {}),
        })
    }
  }
}
