// Public exports of this part of the package; src/index.ts re-exports them all.

export type { PersistedManifest } from '../persisted/manifest.ts'
export { loadPersistedManifest } from '../persisted/manifest.ts'
export type { GraphQLHandlerEvent } from './admit.ts'
export type { GraphQLHandlerOptions } from './handler.ts'
export { createGraphQLHandler } from './handler.ts'
export type {
  OperationPreparer,
  OperationRequest,
  PreparedOperation,
  PrepareOptions,
  PreparerOptions,
} from './operation.ts'
export { createOperationPreparer } from './operation.ts'
export type { GraphQLRateLimit, ThrottleExtension } from './rate-limit.ts'
