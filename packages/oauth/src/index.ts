/**
 * OAuth 2.0 and OpenID Connect authorisation-server core on Fetch `Request`/`Response`.
 *
 * @module
 */

export type { Account } from './account.ts'
export type { ClientConfig, ClientRegistry, GrantType, OAuthClient } from './clients.ts'
export { hashClientSecret, staticClients } from './clients.ts'
export type { AuthorizationServerMetadata } from './discovery.ts'
export type { OAuthErrorCode, OAuthErrorWireCode } from './error.ts'
export { OAuthError } from './error.ts'
export type { OAuthEvent } from './events.ts'
export type { InteractionDetails, InteractionResult } from './interaction.ts'
export type { IntrospectionResult } from './introspect.ts'
export type { JsonWebKeyLike, PublicJwk, SigningAlgorithm, SigningKey } from './keys.ts'
export { generateSigningKey } from './keys.ts'
export { LIMITS } from './limits.ts'
export type { MemoryOAuthStoreOptions } from './memory-store.ts'
export { MemoryOAuthStore } from './memory-store.ts'
export type {
  AuthorizationServerOptions,
  EndpointPaths,
  ResourceConfig,
  TtlOptions,
} from './options.ts'
export type { AuthorizationServer } from './server.ts'
export { createAuthorizationServer } from './server.ts'
export type {
  ActiveToken,
  CodeRecord,
  ConsumeCodeResult,
  FamilyRecord,
  InteractionRecord,
  OAuthStore,
  RotateRefreshOptions,
  RotateRefreshResult,
  TokenRecord,
} from './store.ts'
