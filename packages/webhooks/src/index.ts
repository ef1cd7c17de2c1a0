/**
 * Outbound webhooks embedded in your service, and the receiving side: the event envelope, an
 * endpoint registry with secret rotation, a signing sender over undici behind an SSRF guard,
 * the retry policy of docs/spec.md §3.1, a queue and worker with leases, dead letters and
 * replay; a receiver that verifies the raw bytes, deduplicates by `webhook-id` and acknowledges
 * before its handler runs.
 *
 * @module
 */
export type { AttemptFailure, AttemptResult } from './attempt.ts'
export type { DedupStore } from './dedup-store.ts'
export type {
  AttemptRecord,
  ClaimOptions,
  Delivery,
  DeliveryListQuery,
  DeliveryQueue,
  DeliveryResolution,
  DeliveryStatus,
  LeasedDelivery,
  NewDelivery,
  ReplayFilter,
} from './delivery-queue.ts'
export type {
  EndpointListQuery,
  EndpointSecret,
  EndpointStatus,
  EndpointStore,
  EndpointUpdate,
  WebhookEndpoint,
} from './endpoint-store.ts'
export type { WebhookErrorCode, WebhookErrorOptions } from './error.ts'
export { WebhookError } from './error.ts'
export type { CreateEventOptions, NewEvent, WebhookEvent } from './event.ts'
export { createEvent, parseEvent, webhookEventSchema } from './event.ts'
export type { MemoryDedupStoreOptions } from './memory/dedup-store.ts'
export { MemoryDedupStore } from './memory/dedup-store.ts'
export type { MemoryDeliveryQueueOptions } from './memory/delivery-queue.ts'
export { MemoryDeliveryQueue } from './memory/delivery-queue.ts'
export type { MemoryEndpointStoreOptions } from './memory/endpoint-store.ts'
export { MemoryEndpointStore } from './memory/endpoint-store.ts'
export type { Freshness, FreshnessTracker, FreshnessTrackerOptions } from './ordering.ts'
export { createFreshnessTracker } from './ordering.ts'
export type {
  PublishOptions,
  WebhookPublisher,
  WebhookPublisherOptions,
} from './publisher.ts'
export { createWebhookPublisher } from './publisher.ts'
export type { WebhookContext, WebhookReceiver, WebhookReceiverOptions } from './receiver.ts'
export { createWebhookReceiver } from './receiver.ts'
export type {
  EndpointRegistry,
  EndpointRegistryOptions,
  EndpointView,
  EndpointWithSecret,
  NewEndpoint,
} from './registry.ts'
export { createEndpointRegistry } from './registry.ts'
export type { RetryDecision, RetryPolicy, RetryPolicyOptions } from './retry-policy.ts'
export { createRetryPolicy, retrySchedules } from './retry-policy.ts'
export type { SafeFetch, SafeFetchInit, SafeFetchOptions } from './safe-fetch.ts'
export { createSafeFetch } from './safe-fetch.ts'
export type { WebhookDelivery, WebhookSender, WebhookSenderOptions } from './sender.ts'
export { createWebhookSender } from './sender.ts'
export { isRefusedAddress } from './ssrf/address.ts'
export type { DnsLookup, SsrfGuard, SsrfGuardOptions } from './ssrf/guard.ts'
export { createSsrfGuard } from './ssrf/guard.ts'
export type { DeliveryWorker, DeliveryWorkerEvent, DeliveryWorkerOptions } from './worker.ts'
export { createDeliveryWorker } from './worker.ts'
