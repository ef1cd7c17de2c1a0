/**
 * Conformance suites of the webhook stores, for vitest: run them against your own
 * `EndpointStore`, `DeliveryQueue` or `DedupStore` to check it keeps the contract the registry,
 * the worker and the receiver rely on (atomic claims, leases, compare-and-set, TTLs).
 *
 * @module
 */
export {}
