/**
 * The event envelope (docs/spec.md §2.7): what every delivery's body is. `id` is unique per
 * event and is the `webhook-id` of every delivery of it, so receivers deduplicate on it.
 *
 * @module
 */
import { encodeBase64url } from '@api-blocks/core'
import { z } from 'zod'
import { WebhookError } from './error.ts'

/** The largest `created`: the year 9999 (a millisecond value passed by mistake is refused). */
const MAX_SECONDS = 253_402_300_799

/**
 * One webhook event. Fat events carry the whole object in `data.object`; thin events carry an
 * id and a reference (for example `{ id, object: 'order', url }`) and the receiver fetches the
 * current state. Schemas are additive: members are added, never removed or repurposed.
 *
 * @example
 * ```ts
 * const event: WebhookEvent = {
 *   id: 'evt_01JD5Z0C9Q3N4W8K2M7T6R5P4B',
 *   type: 'order.created',
 *   created: 1764460800,
 *   version: '1',
 *   data: { object: { id: 'ord_1', status: 'open' } },
 * }
 * ```
 */
export interface WebhookEvent<T extends object = Record<string, unknown>> {
  /** Unique per event; the `webhook-id` of every delivery of it. `[A-Za-z0-9_.:-]`, 1 to 128 characters. */
  id: string
  /** `<object>.<action>`: lowercase letters, digits and `_` on each side of one dot (`order.created`). */
  type: string
  /** When the event happened, in whole seconds since the epoch. */
  created: number
  /** The version of the event's schema (for example `'1'` or a date); receivers branch on it. */
  version: string
  /** The object the event concerns, whole (fat) or as a reference (thin). */
  data: { object: T }
}

/** `<object>.<action>`: lowercase letters, digits and `_`, one dot. */
const TYPE = /^[a-z][a-z0-9_]{0,63}\.[a-z][a-z0-9_]{0,63}$/
/** Safe in a header field and a URL path segment, and short enough to key a dedup record. */
const ID = /^[A-Za-z0-9_.:-]{1,128}$/
/** Digits, dots, dashes and letters: `1`, `2026-11-01`, `v2`. */
const VERSION = /^[A-Za-z0-9._-]{1,32}$/

/**
 * The envelope as a zod schema: parse a received body with it (after the signature verified),
 * or check an event before it is published. Unknown members are kept (schemas are additive).
 *
 * @example
 * ```ts
 * const result = webhookEventSchema.safeParse(JSON.parse('{"id":"evt_1","type":"order.created","created":1,"version":"1","data":{"object":{}}}'))
 * console.log(result.success) // true
 * ```
 */
export const webhookEventSchema: z.ZodType<WebhookEvent> = z.looseObject({
  id: z.string().regex(ID, 'an id of 1 to 128 characters from [A-Za-z0-9_.:-]'),
  type: z.string().regex(TYPE, 'a type of the form <object>.<action>, lowercase'),
  created: z.number().int().nonnegative().max(MAX_SECONDS),
  version: z.string().regex(VERSION, 'a version of 1 to 32 characters from [A-Za-z0-9._-]'),
  data: z.looseObject({ object: z.record(z.string(), z.unknown()) }),
}) as z.ZodType<WebhookEvent>

/**
 * Checks that `value` is an envelope; the event, or a {@link WebhookError} `EVENT_INVALID`
 * whose detail names the first member at fault.
 *
 * @example
 * ```ts
 * const event = parseEvent({ id: 'evt_1', type: 'order.created', created: 1, version: '1', data: { object: {} } })
 * console.log(event.type) // 'order.created'
 * ```
 */
export function parseEvent(value: unknown): WebhookEvent {
  const result = webhookEventSchema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  const at = issue.path.length === 0 ? 'the event' : `/${issue.path.join('/')}`
  throw new WebhookError('EVENT_INVALID', `${at}: ${issue.message}`)
}

/**
 * What {@link createEvent} takes: the type and the object; the id, time and version have
 * defaults.
 *
 * @example
 * ```ts
 * const input: NewEvent<{ id: string }> = { type: 'order.created', object: { id: 'ord_1' } }
 * ```
 */
export interface NewEvent<T extends object> {
  type: string
  object: T
  /** Default `'1'`. */
  version?: string
  /** Default `evt_` plus 22 base64url characters (128 random bits). */
  id?: string
  /** Seconds since the epoch; default the clock's. */
  created?: number
}

/**
 * Options of {@link createEvent}: time and randomness are injected (tests fix them).
 *
 * @example
 * ```ts
 * const options: CreateEventOptions = { clock: () => 1_764_460_800_000 }
 * ```
 */
export interface CreateEventOptions {
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /** Fills the array with random bytes (default `crypto.getRandomValues`). */
  random?: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array
}

/**
 * Makes a valid envelope: a fresh unique id (unless given), `created` from the clock, version
 * `'1'` by default. Throws {@link WebhookError} `EVENT_INVALID` for a bad type, id or version.
 *
 * @example
 * ```ts
 * const event = createEvent({ type: 'order.created', object: { id: 'ord_1', status: 'open' } })
 * console.log(event.id.startsWith('evt_')) // true
 * ```
 */
export function createEvent<T extends object>(
  input: NewEvent<T>,
  options: CreateEventOptions = {},
): WebhookEvent<T> {
  const clock = options.clock ?? Date.now
  const random = options.random ?? ((bytes) => crypto.getRandomValues(bytes))
  const event = {
    id: input.id ?? `evt_${encodeBase64url(random(new Uint8Array(16)))}`,
    type: input.type,
    created: input.created ?? Math.floor(clock() / 1000),
    version: input.version ?? '1',
    data: { object: input.object },
  }
  parseEvent(event)
  return event
}
