/**
 * OAuth 2.0 and OpenID Connect authorisation-server core on Fetch `Request`/`Response`.
 *
 * @module
 */
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
