import { describe, expect, test } from 'vitest'
import { createService } from '../src/app.ts'
import {
  createOrderSchema,
  patchOrderSchema,
  registry,
  replaceOrderSchema,
} from '../src/orders/schema.ts'

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
    expect(bodies.length).toBe(3)
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
    for (const schema of [createOrderSchema, replaceOrderSchema, patchOrderSchema]) {
      for (const example of registry.get(schema)?.examples ?? []) {
        expect(schema.safeParse(example).success).toBe(true)
      }
    }
  })
})
