import { describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import {
  createOrderSchema,
  patchOrderSchema,
  registry,
  replaceOrderSchema,
} from '../src/orders/schema.ts'
import {
  createWebhookEndpointSchema,
  deliverySchema,
  webhookEndpointWithSecretSchema,
} from '../src/webhooks/schema.ts'

describe('/openapi.json', () => {
  test('is an OpenAPI 3.1 document with an example for every request body', async () => {
    const response = await createService()(new Request('http://x.test/openapi.json'))
    expect(response.status).toBe(200)
    const doc = await response.json()
    expect(doc.openapi).toBe('3.1.0')
    const bodies: unknown[] = []
    for (const item of Object.values(doc.paths) as Record<string, { requestBody?: unknown }>[]) {
      for (const operation of Object.values(item)) {
        if (operation && typeof operation === 'object' && 'requestBody' in operation)
          bodies.push(operation.requestBody)
      }
    }
    expect(bodies.length).toBe(4)
    for (const body of bodies as {
      content: Record<string, { examples: Record<string, unknown> }>
    }[]) {
      expect(Object.keys(body.content['application/json']?.examples ?? {}).length).toBeGreaterThan(
        0,
      )
    }
    for (const ref of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)) {
      expect(doc.components.schemas, ref[1]).toHaveProperty(ref[1] ?? '')
    }
  })

  test('every registered example is valid against its own schema', () => {
    for (const schema of [
      createOrderSchema,
      replaceOrderSchema,
      patchOrderSchema,
      createWebhookEndpointSchema,
      webhookEndpointWithSecretSchema,
      deliverySchema,
    ]) {
      for (const example of registry.get(schema)?.examples ?? []) {
        expect(schema.safeParse(example).success).toBe(true)
      }
    }
  })
})

describe('/openapi.json declares the OAuth 2.0 security of /v1', () => {
  test('an oauth2 scheme (authorization code with refresh, client credentials) on the public URL, and a scope per operation', async () => {
    const doc = await (
      await createService({ publicUrl: 'https://api.example' })(
        new Request('http://x.test/openapi.json'),
      )
    ).json()
    const scheme = doc.components.securitySchemes.oauth2
    expect(scheme.type).toBe('oauth2')
    expect(scheme.flows.authorizationCode).toMatchObject({
      authorizationUrl: 'https://api.example/authorize',
      tokenUrl: 'https://api.example/token',
      refreshUrl: 'https://api.example/token',
    })
    expect(scheme.flows.clientCredentials.tokenUrl).toBe('https://api.example/token')
    for (const flow of Object.values(scheme.flows) as { scopes: Record<string, string> }[]) {
      expect(Object.keys(flow.scopes).sort()).toEqual([
        'manage:webhooks',
        'read:orders',
        'write:orders',
      ])
    }
    let operations = 0
    for (const [path, item] of Object.entries(doc.paths) as [string, Record<string, unknown>][]) {
      expect(path.startsWith('/v1/')).toBe(true)
      for (const [method, operation] of Object.entries(item)) {
        if (method === 'parameters') continue
        operations++
        const op = operation as { security: unknown; responses: Record<string, unknown> }
        // Registering an endpoint needs read:orders too: it receives every order's events.
        const scopes =
          path === '/v1/webhook_endpoints' && method === 'post'
            ? ['manage:webhooks', 'read:orders']
            : path.startsWith('/v1/webhook_endpoints')
              ? ['manage:webhooks']
              : method === 'get'
                ? ['read:orders']
                : ['write:orders']
        expect(op.security, `${method} ${path}`).toEqual([{ oauth2: scopes }])
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403']))
      }
    }
    expect(operations).toBe(15)
  })
})
