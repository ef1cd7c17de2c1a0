/**
 * The RFC 9700 attack table (as data), the protocol flow and the RFC vectors through the
 * endpoints, on the memory store: the server conformance suite of `@api-blocks/oauth/testing`,
 * which the Redis and PostgreSQL stores run too.
 */
import { MemoryOAuthStore } from '../src/memory-store.ts'
import { runAuthorizationServerConformance } from '../src/testing/index.ts'

runAuthorizationServerConformance('memory', () => new MemoryOAuthStore())
