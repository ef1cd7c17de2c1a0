/**
 * What the conformance cases share: the registered-test helper, fresh keys, the clock origin,
 * and fixtures.
 *
 * @module
 */
import type { IdempotencyStore, StoredResponse } from '../store.ts'

/** What each group of cases receives from `runIdempotencyStoreConformance`. */
export interface SuiteContext {
  /** Registers one test that runs with a fresh store (then cleaned up). */
  readonly it: (title: string, body: (store: IdempotencyStore) => Promise<void>) => void
  /** A fresh random store key, so tests never meet on a shared server. */
  readonly key: () => string
  /** The time the injected clock starts at. */
  readonly t0: number
  /** How many requests race in the concurrency tests. */
  readonly concurrency: number
}

/** The lease of every case, in milliseconds. */
export const LEASE = 30_000
/** The retention of every case, in milliseconds (docs/spec.md §8: 24 h). */
export const RETENTION: number = 24 * 60 * 60 * 1000

/** `length` bytes covering every byte value, so a store that mangles binary is caught. */
export function allBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length)
  for (let index = 0; index < length; index++) bytes[index] = (index * 7 + (index >> 8)) & 0xff
  return bytes
}

/** A response with awkward header values (commas, quotes, empty) and a binary body. */
export function sample(body: Uint8Array = allBytes(256)): StoredResponse {
  return {
    status: 201,
    headers: [
      ['content-type', 'application/octet-stream'],
      ['link', '</a>; rel="a", </b>; rel="b"'],
      ['location', '/v1/orders/42'],
      ['x-empty', ''],
    ],
    body,
  }
}

/** A response as plain data, for deep equality. */
export function plain(response: StoredResponse): unknown {
  return {
    status: response.status,
    headers: response.headers.map(([name, value]) => [name, value]),
    body: [...response.body],
  }
}
