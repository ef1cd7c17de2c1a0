// `npm run start:with-receiver` (at the repository root): the reference service and this
// receiver side by side, wired together. The service runs as a child process, as `npm start`
// would run it, with WEBHOOK_ALLOWED_PRIVATE_ORIGINS naming the receiver's loopback origin
// (the SSRF guard refuses loopback addresses otherwise); once it answers, a demo-backend token
// (client credentials, scope manage:webhooks) registers http://127.0.0.1:<port>/webhooks, and
// the receiver starts with the secret the registration answered. Ctrl-C stops both.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parsePort } from './config.ts'
import { startReceiver } from './server.ts'

const SERVICE_MAIN = fileURLToPath(new URL('../../service/src/main.ts', import.meta.url))
/** The demo back end of the service (examples/service/README.md). */
const CLIENT = { id: 'demo-backend', secret: 'demo-backend-secret' }

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

/** Starts the service and the receiver, registers one with the other; resolves once both run. */
export async function withService(): Promise<void> {
  const servicePort = parsePort('PORT', process.env['PORT'], 3000)
  const receiverPort = parsePort('RECEIVER_PORT', process.env['RECEIVER_PORT'], 4000)
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
  })
  const exited = new Promise<number | null>((resolve) => service.once('exit', resolve))
  let stopping = false
  void exited.then((code) => {
    if (!stopping) {
      console.error(`The service exited (${code}); stopping.`)
      process.exit(1)
    }
  })
  await waitFor(`${base}/`, Date.now() + 30_000)

  const tokenResponse = await fetch(`${base}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${CLIENT.id}:${CLIENT.secret}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope: 'read:orders write:orders manage:webhooks',
    }),
  })
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string }
  const registered = await fetch(`${base}/v1/webhook_endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiverOrigin}/webhooks` }),
  })
  const endpoint = (await registered.json()) as { id?: string; secret?: string; detail?: string }
  if (registered.status !== 201 || endpoint.secret === undefined) {
    stopping = true
    service.kill('SIGTERM')
    throw new Error(`Registering the receiver failed (${registered.status}): ${endpoint.detail}`)
  }
  const receiver = await startReceiver({
    secrets: [endpoint.secret],
    port: receiverPort,
    host: '127.0.0.1',
    redisUrl: process.env['REDIS_URL'],
  })
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
      service.kill('SIGTERM')
      void Promise.all([receiver.close(), exited]).then(() => process.exit(0))
    })
  }
}
