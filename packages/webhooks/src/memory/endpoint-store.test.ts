import { describe, expect, test } from 'vitest'
import type { WebhookEndpoint } from '../endpoint-store.ts'
import { runEndpointStoreConformance } from '../testing/index.ts'
import { MemoryEndpointStore } from './endpoint-store.ts'

runEndpointStoreConformance('memory', () => new MemoryEndpointStore())

function endpoint(id: string): WebhookEndpoint {
  return {
    id,
    url: 'https://hooks.example.com/',
    events: null,
    status: 'enabled',
    disabledReason: null,
    secrets: [],
    owner: null,
    createdAt: 0,
    updatedAt: 0,
    version: 1,
  }
}

describe('MemoryEndpointStore bounds', () => {
  test('the constructor refuses a maxEndpoints that is not a positive integer', () => {
    for (const maxEndpoints of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryEndpointStore({ maxEndpoints })).toThrow(RangeError)
    }
    expect(new MemoryEndpointStore().maxEndpoints).toBe(10_000)
  })

  test('at maxEndpoints insert rejects and evicts nothing; a delete makes room', async () => {
    const store = new MemoryEndpointStore({ maxEndpoints: 2 })
    await store.insert(endpoint('we_a'))
    await store.insert(endpoint('we_b'))
    await expect(store.insert(endpoint('we_c'))).rejects.toThrow(/full \(maxEndpoints 2\)/)
    expect(store.size).toBe(2)
    expect(await store.get('we_a')).toBeDefined()
    await store.delete('we_a')
    await store.insert(endpoint('we_c'))
    expect((await store.list({ limit: 10 })).map((e) => e.id)).toEqual(['we_b', 'we_c'])
  })

  test('ids are ordered by code unit (as COLLATE "C"), in list and subscribed alike', async () => {
    const store = new MemoryEndpointStore()
    for (const id of ['we_b', 'we_B', 'we__', 'we_-', 'we_0']) await store.insert(endpoint(id))
    const order = ['we_-', 'we_0', 'we_B', 'we__', 'we_b']
    expect((await store.list({ limit: 10 })).map((e) => e.id)).toEqual(order)
    expect((await store.subscribed('order.created')).map((e) => e.id)).toEqual(order)
    expect((await store.list({ limit: 10, after: 'we_B' })).map((e) => e.id)).toEqual(
      order.slice(3),
    )
  })
})
