/**
 * Conformance suites for the stores of @api-blocks/graphql, for vitest: run them against your
 * own `PersistedDocumentStore` or `PubSub` to check it keeps the contract the
 * endpoint and subscriptions rely on (the memory, Redis and PostgreSQL stores pass them).
 *
 * @module
 */
export type { PersistedDocumentStoreConformanceOptions } from './persisted-document-store-conformance.ts'
export { runPersistedDocumentStoreConformance } from './persisted-document-store-conformance.ts'
export type { PubSubConformanceOptions } from './pubsub-conformance.ts'
export { runPubSubConformance } from './pubsub-conformance.ts'
