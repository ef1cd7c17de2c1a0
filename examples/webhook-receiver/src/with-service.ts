// `npm run start:with-receiver` (at the repository root): the reference service and this
// receiver side by side, wired together. The service runs as a child process, as `npm start`
// would run it, with WEBHOOK_ALLOWED_PRIVATE_ORIGINS naming the receiver's loopback origin
// (the SSRF guard refuses loopback addresses otherwise); once it answers, a demo-backend token
// (client credentials, scopes manage:webhooks and read:orders) registers
// http://127.0.0.1:<port>/webhooks, and the receiver starts with the secret the registration
// answered. Ctrl-C (or SIGTERM) deletes the endpoint it registered, then stops both; an
// endpoint of the same URL left by a run that could not (killed) is deleted at the next start,
// so endpoints never pile up with stale secrets in a service on PostgreSQL.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { parsePort } from './config.ts'
import { startReceiver } from './server.ts'

const SERVICE_MAIN = fileURLToPath(new URL('../../service/src/main.ts', import.meta.url))
/** The demo back end of the service (examples/service/README.md). */
const CLIENT = { id: 'demo-backend', secret: 'demo-backend-secret' }

/** `port`, or for 0 a port free on 127.0.0.1 now: the URLs name it before anything listens. */
async function resolvePort(port: number): Promise<number> {
  if (port !== 0) return port
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port: free } = probe.address() as { port: number }
  probe.close()
  await once(probe, 'close')
  return free
}

async function waitFor(url: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      await response.body?.cancel()
      if (response.ok) return
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`The service did not answer at ${url}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** A demo-backend token for the webhook endpoints (registering one needs read:orders too). */
async function tokenOf(base: string): Promise<string> {
  const response = await fetch(`${base}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${CLIENT.id}:${CLIENT.secret}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope: 'read:orders write:orders manage:webhooks',
    }),
    signal: AbortSignal.timeout(10_000),
  })
  const body = (await response.json()) as { access_token?: string }
  if (!response.ok || body.access_token === undefined) {
    throw new Error(`No token from ${base}/token (${response.status})`)
  }
  return body.access_token
}

/** Deletes demo-backend's endpoints that `match` (it has at most 20: one page of 100). */
async function deleteEndpoints(
  base: string,
  token: string,
  match: (endpoint: { id: string; url: string }) => boolean,
): Promise<void> {
  const headers = { authorization: `Bearer ${token}` }
  const listed = await fetch(`${base}/v1/webhook_endpoints?limit=100`, {
    headers,
    signal: AbortSignal.timeout(10_000),
  })
  if (!listed.ok) throw new Error(`Listing the endpoints failed (${listed.status})`)
  const { data } = (await listed.json()) as { data: { id: string; url: string }[] }
  for (const endpoint of data.filter(match)) {
    const deleted = await fetch(`${base}/v1/webhook_endpoints/${endpoint.id}`, {
      method: 'DELETE',
      headers,
      signal: AbortSignal.timeout(10_000),
    })
    await deleted.body?.cancel()
    if (!deleted.ok && deleted.status !== 404) {
      throw new Error(`Deleting endpoint ${endpoint.id} failed (${deleted.status})`)
    }
  }
}

/** Starts the service and the receiver, registers one with the other; resolves once both run. */
export async function withService(): Promise<void> {
  // PORT=0 (or RECEIVER_PORT=0): a free port, chosen here, since the service's base URL and
  // the receiver's origin (its registration, the service's allow-list) must name the real one.
  const servicePort = await resolvePort(parsePort('PORT', process.env['PORT'], 3000))
  const receiverPort = await resolvePort(
    parsePort('RECEIVER_PORT', process.env['RECEIVER_PORT'], 4000),
  )
  const receiverOrigin = `http://127.0.0.1:${receiverPort}`
  const base = `http://127.0.0.1:${servicePort}`
  const service = spawn(process.execPath, ['--conditions=@api-blocks/source', SERVICE_MAIN], {
    env: {
      ...process.env,
      PORT: String(servicePort),
      HOST: '127.0.0.1',
      WEBHOOK_ALLOWED_PRIVATE_ORIGINS: receiverOrigin,
    },
    stdio: 'inherit',
    // Its own process group: Ctrl-C at the terminal reaches this process only, which deletes
    // its endpoint while the service still answers, then stops the service.
    detached: true,
  })
  // Whatever ends this process, the service ends with it.
  process.once('exit', () => service.kill('SIGTERM'))
  const exited = new Promise<number | null>((resolve) => service.once('exit', resolve))
  let stopping = false
  void exited.then((code) => {
    if (!stopping) {
      console.error(`The service exited (${code}); stopping.`)
      process.exit(1)
    }
  })
  await waitFor(`${base}/`, Date.now() + 30_000)

  const url = `${receiverOrigin}/webhooks`
  const token = await tokenOf(base)
  await deleteEndpoints(base, token, (endpoint) => endpoint.url === url)
  const registered = await fetch(`${base}/v1/webhook_endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
    signal: AbortSignal.timeout(10_000),
  })
  const endpoint = (await registered.json()) as { id?: string; secret?: string; detail?: string }
  if (registered.status !== 201 || endpoint.secret === undefined || endpoint.id === undefined) {
    stopping = true
    service.kill('SIGTERM')
    throw new Error(`Registering the receiver failed (${registered.status}): ${endpoint.detail}`)
  }
  const endpointId = endpoint.id
  /** Deletes the endpoint registered above (a fresh token: the first may have expired). */
  const unregister = async (): Promise<void> => {
    try {
      await deleteEndpoints(base, await tokenOf(base), (listed) => listed.id === endpointId)
      console.log(`deleted endpoint ${endpointId}`)
    } catch (error) {
      console.error(`Could not delete endpoint ${endpointId}: ${(error as Error).message}`)
    }
  }
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  try {
    receiver = await startReceiver({
      secrets: [endpoint.secret],
      port: receiverPort,
      host: '127.0.0.1',
      redisUrl: process.env['REDIS_URL'],
    })
  } catch (error) {
    await unregister()
    stopping = true
    service.kill('SIGTERM')
    throw error
  }
  console.log(`
webhook receiver listening on ${receiver.origin}/webhooks, registered as endpoint ${endpoint.id}
  (every order event of ${base} is logged below, once; the secret is not shown)
Create an order to see one:
  TOKEN=$(curl -s -u ${CLIENT.id}:${CLIENT.secret} -d grant_type=client_credentials \\
    -d 'scope=read:orders write:orders manage:webhooks' ${base}/token | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')
  curl -i -X POST ${base}/v1/orders -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
       -d '{"customer":"Ada Lovelace","items":[{"sku":"BOOK-042","quantity":2}]}'
  curl -s ${base}/v1/webhook_endpoints/${endpoint.id}/deliveries -H "authorization: Bearer $TOKEN"
`)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopping = true
      void unregister()
        .then(() => {
          service.kill('SIGTERM')
          return Promise.all([receiver.close(), exited])
        })
        .then(() => process.exit(0))
    })
  }
}
