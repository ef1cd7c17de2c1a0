/**
 * Discovery: the server's metadata (RFC 8414 §2 and OpenID Connect Discovery §3), one JSON
 * document served at both well-known paths, and the JWKS of its public keys (RFC 7517 §5).
 *
 * @module
 */
import { RELEASABLE_CLAIMS } from './account.ts'
import { endpointUrl, type ResolvedOptions } from './options.ts'

/**
 * The metadata clients read to configure themselves (RFC 8414 §2, OpenID Connect Discovery
 * §3), with every field oauth4webapi and openid-client look for.
 *
 * @example
 * ```ts
 * const metadata: AuthorizationServerMetadata = server.metadata
 * metadata.code_challenge_methods_supported // ['S256']
 * ```
 */
export interface AuthorizationServerMetadata {
  readonly issuer: string
  readonly authorization_endpoint: string
  readonly token_endpoint: string
  readonly introspection_endpoint: string
  readonly revocation_endpoint: string
  readonly jwks_uri: string
  readonly userinfo_endpoint: string
  readonly response_types_supported: readonly string[]
  readonly response_modes_supported: readonly string[]
  readonly grant_types_supported: readonly string[]
  readonly token_endpoint_auth_methods_supported: readonly string[]
  readonly introspection_endpoint_auth_methods_supported: readonly string[]
  readonly revocation_endpoint_auth_methods_supported: readonly string[]
  readonly code_challenge_methods_supported: readonly string[]
  readonly scopes_supported: readonly string[]
  readonly subject_types_supported: readonly string[]
  readonly id_token_signing_alg_values_supported: readonly string[]
  readonly claims_supported: readonly string[]
  readonly authorization_response_iss_parameter_supported: true
  readonly request_parameter_supported: false
  readonly request_uri_parameter_supported: false
}

/**
 * The metadata of a server with these options.
 *
 * @example
 * ```ts
 * buildMetadata(resolveOptions(options)).token_endpoint // 'https://as.example.com/token'
 * ```
 */
export function buildMetadata(options: ResolvedOptions): AuthorizationServerMetadata {
  const { issuer, paths } = options
  return Object.freeze({
    issuer,
    authorization_endpoint: endpointUrl(issuer, paths.authorize),
    token_endpoint: endpointUrl(issuer, paths.token),
    introspection_endpoint: endpointUrl(issuer, paths.introspect),
    revocation_endpoint: endpointUrl(issuer, paths.revoke),
    jwks_uri: endpointUrl(issuer, paths.jwks),
    userinfo_endpoint: endpointUrl(issuer, paths.userinfo),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: [
      'client_secret_basic',
      'client_secret_post',
      'none',
    ],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: options.scopesSupported,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: options.signingAlgorithms,
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      ...RELEASABLE_CLAIMS,
    ],
    authorization_response_iss_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  })
}

/**
 * A public JSON document, cacheable for a while (RFC 9111 §5.2.2.1).
 *
 * @example
 * ```ts
 * publicJson({ keys: [] }, 300) // 200, Cache-Control: public, max-age=300
 * ```
 */
export function publicJson(body: unknown, maxAge: number): Response {
  return new Response(JSON.stringify(body), {
    headers: {
      'content-type': 'application/json',
      'cache-control': `public, max-age=${maxAge}`,
      'access-control-allow-origin': '*',
    },
  })
}
