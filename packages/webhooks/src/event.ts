/**
 * The event envelope (docs/spec.md §2.7): what every delivery's body is. `id` is unique per
 * event and is the `webhook-id` of every delivery of it, so receivers deduplicate on it.
 *
 * @module
 */

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
