/**
 * GraphQL over HTTP with its defences in one pass: depth, aliases, directives, tokens, nodes and
 * a variable-aware cost (IBM cost directives), charged to a rate limit and reported in
 * `extensions.cost`; persisted queries (Apollo APQ, `documentId`, allow-list); introspection
 * switchable off; field authorisation from the bearer `Principal`; Relay connections over the
 * signed cursors of @api-blocks/pagination; subscriptions over server-sent events (here) and
 * WebSocket (`@api-blocks/graphql/ws`), fed by a {@link PubSub}.
 *
 * @module
 */

// The contracts (error codes, guard options and reports, stores) are listed here; each part of
// the package has its own list of exports: the guard pass, the HTTP endpoint (and server-sent
// events), schema helpers (field authorisation, Relay connections), and the in-memory stores.
export type { GraphQLErrorCode } from './error.ts'
export { codedError } from './error.ts'
export * from './guards/index.ts'
export type {
  CostOptions,
  CostResult,
  DocumentAnalysis,
  GuardLimits,
  GuardOptions,
  OperationAnalysis,
} from './guards/options.ts'
export * from './http/index.ts'
export type { PersistedDocumentStore } from './persisted/store.ts'
export type { PubSub, SubscribeOptions } from './pubsub/pubsub.ts'
export * from './schema/index.ts'
export * from './stores.ts'
