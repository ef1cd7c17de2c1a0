// The webhook endpoint resource of the reference service (docs/service.md, "Webhooks"): the
// zod schemas that validate request bodies and generate the OpenAPI document, in the registry
// of the order schemas (one document, one set of components).
import { z } from 'zod'
import { registry } from '../orders/schema.ts'
import { ORDER_EVENT_TYPES } from '../orders/store.ts'

/** The longest receiver URL (the SSRF guard refuses longer ones too). */
const MAX_URL_LENGTH = 2048

const eventType = z.enum(ORDER_EVENT_TYPES)

/** POST /v1/webhook_endpoints */
export const createWebhookEndpointSchema = z
  .object({
    // Checked here for shape only; the SSRF guard checks the scheme, the credentials and every
    // address the host resolves to (422 with a pointer at /url), then again at each connect.
    url: z.string().min(1).max(MAX_URL_LENGTH),
    // Absent: every event type, present and future.
    events: z
      .array(eventType)
      .min(1)
      .max(ORDER_EVENT_TYPES.length)
      .refine((types) => new Set(types).size === types.length, 'must not repeat an event type')
      .optional(),
  })
  .strict()
  .register(registry, {
    id: 'CreateWebhookEndpoint',
    examples: [
      { url: 'https://hooks.example.com/orders', events: ['order.created', 'order.cancelled'] },
      { url: 'https://hooks.example.com/all' },
    ],
  })

const endpointExample = {
  id: 'we_Hk3vQ2t9mR4xW8pL1nZ6bC',
  url: 'https://hooks.example.com/orders',
  events: ['order.created', 'order.cancelled'],
  status: 'enabled',
  disabled_reason: null,
  created_at: '2026-11-22T10:00:00.000Z',
  updated_at: '2026-11-22T10:00:00.000Z',
}

/** A webhook endpoint as the API shows it (never its secrets). */
const webhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(eventType).nullable().describe('The event types it receives; null: all'),
    status: z.enum(['enabled', 'disabled']),
    disabled_reason: z
      .string()
      .nullable()
      .describe('Why it is disabled: "gone" after a 410 from the receiver; null when enabled'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .register(registry, { id: 'WebhookEndpoint', examples: [endpointExample] })

/** The answer of a create or a rotation: the endpoint and the secret, shown this once. */
export const webhookEndpointWithSecretSchema = webhookEndpointSchema
  .extend({
    secret: z
      .string()
      .describe(
        'whsec_ and the base64 of 32 random bytes: the signing key (Standard Webhooks), shown only in this answer',
      ),
  })
  .register(registry, {
    id: 'WebhookEndpointWithSecret',
    examples: [
      { ...endpointExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwJLuSb2H8z5A=' },
    ],
  })

const attemptSchema = z
  .object({
    attempt: z.number().int().nonnegative(),
    at: z.iso.datetime(),
    status_code: z.number().int().nullable().describe('The receiver’s status; null: no answer'),
    latency_ms: z.number().nonnegative(),
    failure: z
      .string()
      .nullable()
      .describe(
        'Why no answer came (timeout, connection, address-refused) or why no attempt was made (endpoint-disabled, endpoint-deleted)',
      ),
    response_body: z
      .string()
      .nullable()
      .describe('The start of the receiver’s answer (at most 1 KiB), or the failure’s message'),
  })
  .register(registry, { id: 'DeliveryAttempt' })

/** One event's delivery to one endpoint, with its attempt log. */
export const deliverySchema = z
  .object({
    event_id: z.string().describe('The webhook-id of every attempt'),
    event_type: eventType,
    status: z.enum(['pending', 'succeeded', 'failed', 'dead']),
    attempt_count: z
      .number()
      .int()
      .nonnegative()
      .describe('Attempts since the event was enqueued or last redelivered'),
    attempts: z.array(attemptSchema).describe('The attempt log, oldest first (the last 50)'),
    next_attempt_at: z.iso
      .datetime()
      .nullable()
      .describe('When the next attempt is due; null once final'),
    created_at: z.iso.datetime().describe('When the event was created'),
    updated_at: z.iso.datetime(),
  })
  .register(registry, {
    id: 'WebhookDelivery',
    examples: [
      {
        event_id: 'evt_3kTMd9Q2R5vX1bN8pL4wZg',
        event_type: 'order.created',
        status: 'succeeded',
        attempt_count: 2,
        attempts: [
          {
            attempt: 0,
            at: '2026-11-22T10:00:00.120Z',
            status_code: 503,
            latency_ms: 41,
            failure: null,
            response_body: 'busy',
          },
          {
            attempt: 1,
            at: '2026-11-22T10:01:02.310Z',
            status_code: 200,
            latency_ms: 12,
            failure: null,
            response_body: null,
          },
        ],
        next_attempt_at: null,
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:01:02.322Z',
      },
    ],
  })

export type WebhookEndpointView = z.infer<typeof webhookEndpointSchema>
export type DeliveryView = z.infer<typeof deliverySchema>
