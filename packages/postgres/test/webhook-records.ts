/**
 * Records for the webhook store tests: deliveries, attempts and endpoints with fixed times.
 *
 * @module
 */
import type { AttemptRecord, NewDelivery, WebhookEndpoint } from '@api-blocks/webhooks'

/** A fixed time, in milliseconds since the epoch. */
export const T0 = 1_764_460_800_000

/** A delivery of `eventId` to `endpointId`, created and due at `at`. */
export function delivery(eventId: string, endpointId: string, at: number = T0): NewDelivery {
  return {
    eventId,
    eventType: 'order.created',
    endpointId,
    payload: JSON.stringify({
      id: eventId,
      type: 'order.created',
      data: { object: { n: 'é"\\' } },
    }),
    createdAt: at,
    nextAttemptAt: at,
  }
}

/** The attempt record of attempt number `attempt` at `at`, answered with `status`. */
export function attempt(attempt: number, at: number, status: number | null = 503): AttemptRecord {
  return {
    attempt,
    at,
    latencyMs: 12,
    status,
    failure: status === null ? 'timeout' : null,
    body: status === null ? 'the deadline passed' : 'busy',
  }
}

/** An enabled endpoint with one secret. */
export function endpoint(id: string, overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id,
    url: `https://hooks.example.com/${id}`,
    events: ['order.created', 'order.updated'],
    status: 'enabled',
    disabledReason: null,
    secrets: [{ value: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', createdAt: T0, expiresAt: null }],
    owner: 'client:demo',
    createdAt: T0,
    updatedAt: T0,
    version: 1,
    ...overrides,
  }
}
