// A plain in-memory EndpointStore for the registry's tests, until the package's
// MemoryEndpointStore is merged in: the contract of endpoint-store.ts, nothing more.
import type { EndpointStore, WebhookEndpoint } from '../src/endpoint-store.ts'

export function plainEndpointStore(): EndpointStore & { writes: number } {
  const records = new Map<string, WebhookEndpoint>()
  return {
    writes: 0,
    async insert(endpoint) {
      if (records.has(endpoint.id)) throw new Error(`duplicate id ${endpoint.id}`)
      records.set(endpoint.id, structuredClone(endpoint))
    },
    async get(id) {
      const found = records.get(id)
      return found === undefined ? undefined : structuredClone(found)
    },
    async list({ owner, after, limit }) {
      return [...records.values()]
        .filter(
          (e) =>
            (owner === undefined || e.owner === owner) && (after === undefined || e.id > after),
        )
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map((e) => structuredClone(e))
    },
    async subscribed(type) {
      return [...records.values()]
        .filter((e) => e.status === 'enabled' && (e.events === null || e.events.includes(type)))
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map((e) => structuredClone(e))
    },
    async update(id, update, expectedVersion) {
      const current = records.get(id)
      if (
        current === undefined ||
        (expectedVersion !== undefined && current.version !== expectedVersion)
      )
        return undefined
      const next = { ...current, ...structuredClone(update), version: current.version + 1 }
      records.set(id, next)
      this.writes++
      return structuredClone(next)
    },
    async delete(id) {
      return records.delete(id)
    },
  }
}
