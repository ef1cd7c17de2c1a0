import { createService } from '../examples/service/src/app.ts'

const body = JSON.stringify({ customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] })
const service = createService({ rateLimits: [{ name: 'x', quota: 1e9, windowSeconds: 1 }] })
const post = (key?: string) =>
  service(
    new Request('http://bench.test/v1/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body,
    }),
  )
for (let r = 0; r < 3; r++) {
  let t = performance.now()
  for (let i = 0; i < 3000; i++) await (await post()).arrayBuffer()
  const a = (performance.now() - t) / 3000
  t = performance.now()
  for (let i = 0; i < 3000; i++) await (await post(`k-${r}-${i}`)).arrayBuffer()
  const b = (performance.now() - t) / 3000
  console.log(`no key ${(a * 1000).toFixed(0)} µs, new key ${(b * 1000).toFixed(0)} µs`)
}
