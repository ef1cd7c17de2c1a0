// The two authorisation servers of the oauth suite, configured alike, each started in its own
// child process (`node oauth-servers.ts ours|theirs`, pinned to CPU 0 by startNode):
//
// - ours: createAuthorizationServer on MemoryOAuthStore, served by @api-blocks/node's
//   toNodeListener with the lightweight objects on a bare node:http server;
// - theirs: node-oidc-provider 9 (a Koa application) with its built-in memory adapter (an LRU
//   of 1,000 entries), its `callback()` on a bare node:http server.
//
// Alike: one confidential client authenticating with client_secret_basic and a generated
// 256-bit secret, the client_credentials grant, opaque access tokens of 900 s (oidc-provider:
// resourceIndicators off, so client-credentials tokens are opaque), introspection on, no
// per-request logging, no rate limits, NODE_ENV=production, the same Node binary.
import type { RequestListener } from 'node:http'
import { createServer } from 'node:http'
import type { Service } from './service-process.ts'
import { startNode } from './service-process.ts'

export const CLIENT_ID = 'bench-client'
/** 32 bytes, base64url: what a generated client secret carries (a bench value, not a secret). */
export const CLIENT_SECRET = 'q3vJ0m6XoZ1cT8bVh2yK4wLr9sNe5uFa7dGi3jPkQxU'
export const SCOPE = 'read:orders'
const ISSUER = 'http://127.0.0.1'
const ACCESS_TOKEN_TTL_S = 900

export type ServerKind = 'ours' | 'theirs'

/** The paths each server answers the token and introspection requests on. */
export const paths: Record<ServerKind, { token: string; introspect: string }> = {
  ours: { token: '/token', introspect: '/oauth/introspect' },
  theirs: { token: '/token', introspect: '/token/introspection' },
}

/**
 * Starts `kind` in a child process pinned to CPU 0. With OAUTH_BENCH_PROFILE=<folder>, each
 * server writes a CPU profile there when it is stopped (`node --cpu-prof`).
 */
export function startOAuthServer(kind: ServerKind): Promise<Service> {
  const profile = process.env['OAUTH_BENCH_PROFILE']
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []
  return startNode([...flags, new URL(import.meta.url).pathname, kind], {
    env: { NODE_ENV: 'production' },
  })
}

async function ours(): Promise<RequestListener> {
  const { createAuthorizationServer, hashClientSecret, MemoryOAuthStore } = await import(
    '@api-blocks/oauth'
  )
  const { toNodeListener } = await import('@api-blocks/node')
  const server = createAuthorizationServer({
    issuer: ISSUER,
    clients: [
      {
        id: CLIENT_ID,
        secretHashes: [await hashClientSecret(CLIENT_SECRET)],
        grantTypes: ['client_credentials'],
        scopes: [SCOPE],
      },
    ],
    interactionUrl: (id) => `${ISSUER}/login?interaction=${id}`,
    store: new MemoryOAuthStore(),
    ttl: { accessToken: ACCESS_TOKEN_TTL_S },
  })
  const notFound = () => new Response(null, { status: 404 })
  return toNodeListener(async (request) => (await server.handle(request)) ?? notFound(), {
    lightweight: true,
  })
}

async function theirs(): Promise<RequestListener> {
  const { default: Provider } = await import('oidc-provider')
  const { exportJWK, generateKeyPair } = await import('jose')
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const provider = new Provider(ISSUER, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'ES256', // its one key (it never signs one here)
        scope: SCOPE,
      },
    ],
    scopes: [SCOPE],
    features: {
      clientCredentials: { enabled: true },
      // Its default policy, spelled out (it warns otherwise).
      introspection: {
        enabled: true,
        allowedPolicy: async (
          ctx: { oidc: { client: { clientId: string } } },
          client: { clientAuthMethod: string },
          token: { clientId: string },
        ) => !(client.clientAuthMethod === 'none' && token.clientId !== ctx.oidc.client.clientId),
      },
      resourceIndicators: { enabled: false },
      devInteractions: { enabled: false },
    },
    ttl: { ClientCredentials: ACCESS_TOKEN_TTL_S },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'bench', alg: 'ES256', use: 'sig' }] },
    cookies: { keys: ['bench-cookie-key-0123456789abcdef'] },
  })
  return provider.callback()
}

if (import.meta.main) {
  const kind = process.argv[2]
  if (kind !== 'ours' && kind !== 'theirs') throw new Error('usage: oauth-servers.ts ours|theirs')
  const listener = kind === 'ours' ? await ours() : await theirs()
  // A normal exit on SIGTERM (what Service.stop sends), so that --cpu-prof writes its profile.
  process.on('SIGTERM', () => process.exit(0))
  const server = createServer(listener).listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number }
    console.log(`listening on http://127.0.0.1:${port}`)
  })
}
