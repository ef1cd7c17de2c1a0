// Public exports of this part of the package; src/index.ts re-exports them all.
export type { MemoryPersistedDocumentStoreOptions } from './persisted/memory.ts'
export { MemoryPersistedDocumentStore } from './persisted/memory.ts'
export type { MemoryPubSubOptions, PubSubEvent } from './pubsub/memory.ts'
export { MemoryPubSub } from './pubsub/memory.ts'
