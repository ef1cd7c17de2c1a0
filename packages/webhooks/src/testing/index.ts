/**
 * Conformance suites of the webhook stores, for vitest: run them against your own
 * `EndpointStore`, `DeliveryQueue` or `DedupStore` to check it keeps the contract the registry,
 * the worker and the receiver rely on (atomic claims, leases, compare-and-set, TTLs).
 *
 * @module
 */
export type { DedupStoreConformanceOptions } from './dedup-store-conformance.ts'
export { runDedupStoreConformance } from './dedup-store-conformance.ts'
export type { DeliveryQueueConformanceOptions } from './delivery-queue-conformance.ts'
export { runDeliveryQueueConformance } from './delivery-queue-conformance.ts'
export type { EndpointStoreConformanceOptions } from './endpoint-store-conformance.ts'
export { runEndpointStoreConformance } from './endpoint-store-conformance.ts'
