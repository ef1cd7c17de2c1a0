/**
 * Conformance suites for the stores of @api-blocks/graphql: run them against your own
 * {@link PersistedDocumentStore} or {@link PubSub} (memory, Redis and PostgreSQL pass them).
 *
 * @module
 */
export {}
