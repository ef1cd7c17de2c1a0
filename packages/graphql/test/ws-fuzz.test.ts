import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bearerAuthentication } from '../src/ws/index.ts'
import type { Harness } from './ws-support.ts'
import { collect, MemoryPubSub, makeSchema, raw, start } from './ws-support.ts'

// Bad input never crashes, hangs or leaks (CONTRIBUTING.md): arbitrary frames on an
// acknowledged socket end in a protocol close code (4400…4499, or 1009) or a coded answer, and
// the server keeps serving. Time-boxed.

let harness: Harness
beforeAll(async () => {
  harness = await start({ schema: makeSchema(new MemoryPubSub()), maxPayloadBytes: 4096 })
})
afterAll(() => harness.close())

const message = fc.oneof(
  fc.string(),
  fc.json(),
  fc.record({
    type: fc.constantFrom('connection_init', 'ping', 'pong', 'subscribe', 'complete', 'next', 'x'),
    id: fc.oneof(fc.string(), fc.integer(), fc.constant(undefined)),
    payload: fc.oneof(
      fc.jsonValue(),
      fc.record({
        query: fc.oneof(
          fc.string(),
          fc.constantFrom(
            '{ hello }',
            'subscription { orderChanged { id } }',
            '{ deep { deep { leaf } } }',
          ),
        ),
        variables: fc.oneof(fc.jsonValue(), fc.constant(undefined)),
        operationName: fc.oneof(fc.string(), fc.constant(undefined)),
        extensions: fc.oneof(fc.jsonValue(), fc.constant(undefined)),
      }),
    ),
  }),
)

describe('arbitrary frames', () => {
  test('every socket ends with a protocol code or answers coded errors; the server serves on', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 5 }), async (frames) => {
        const socket = await raw(harness.url)
        socket.send({ type: 'connection_init', payload: { authorization: 'Bearer reader' } })
        await socket.message((m) => m['type'] === 'connection_ack')
        for (const frame of frames) {
          socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
        }
        // A marker operation: either it answers (the socket survived every frame) or the
        // socket closed with a protocol code.
        socket.send({ id: '__marker', type: 'subscribe', payload: { query: '{ hello }' } })
        const outcome = await Promise.race([
          socket.message((m) => m['id'] === '__marker').then((m) => ({ answered: m })),
          socket.closed.then((closed) => ({ closed })),
        ])
        if ('closed' in outcome) {
          const { code } = outcome.closed
          expect(code === 1009 || (code >= 4400 && code < 4500)).toBe(true)
        } else {
          expect(outcome.answered['type']).toMatch(/^(next|error)$/)
        }
        for (const received of socket.messages as Record<string, unknown>[]) {
          if (received['type'] !== 'error') continue
          for (const error of received['payload'] as { extensions?: { code?: unknown } }[]) {
            expect(typeof error.extensions?.code).toBe('string')
          }
        }
        socket.socket.terminate()
        await socket.closed
      }),
      { numRuns: 300, interruptAfterTimeLimit: 4_000 },
    )
    expect(harness.errors).toEqual([])
    const { results } = await collect(harness.client(), { query: '{ hello }' })
    expect(results).toEqual([{ data: { hello: 'world' } }])
  }, 10_000)

  test('bearerAuthentication never throws on an arbitrary payload without a verifier outage', async () => {
    const authenticate = bearerAuthentication({
      verify: async () => {
        throw new Error('never reached for a payload that is not a bearer credential')
      },
    })
    await fc.assert(
      fc.asyncProperty(
        fc
          .dictionary(fc.string(), fc.jsonValue())
          .filter(
            (params) =>
              !Object.entries(params).some(
                ([key, value]) =>
                  key.toLowerCase() === 'authorization' &&
                  typeof value === 'string' &&
                  /^bearer +[A-Za-z0-9\-._~+/]+=*$/i.test(value),
              ),
          ),
        async (params) => {
          expect(await authenticate(params, undefined as never)).toBeUndefined()
        },
      ),
      { numRuns: 500, interruptAfterTimeLimit: 2_000 },
    )
  })
})
