/**
 * The real Redis server the tests run against: `REDIS_URL` (CI sets `redis://127.0.0.1:6379`).
 * Without it the server suites are skipped, and their titles say so. Every test writes under a
 * prefix of its own and deletes it afterwards, so test files (and other users of the server)
 * never meet.
 *
 * @module
 */

/** The server's URL, or `undefined`: then the server suites are skipped. */
export const redisUrl: string | undefined = process.env['REDIS_URL'] || undefined

/** The options of `createClient` for `REDIS_URL`. */
export const clientOptions: { url?: string } = redisUrl === undefined ? {} : { url: redisUrl }

/** A suite title that says when and why it is skipped. */
export function serverSuite(title: string): string {
  return redisUrl === undefined ? `${title} (skipped: REDIS_URL not set)` : `${title} (REDIS_URL)`
}

/** A fresh key prefix for one test. */
export function testPrefix(what: string): string {
  return `api-blocks-test:${what}:${crypto.randomUUID()}:`
}

/** The two commands `deletePrefix` needs (a node-redis client has them). */
export interface ScanningClient {
  scanIterator(options: { MATCH: string; COUNT: number }): AsyncIterable<string[]>
  unlink(keys: string[]): Promise<number>
}

/** Deletes every key under `prefix`, in batches (SCAN, never KEYS). */
export async function deletePrefix(client: ScanningClient, prefix: string): Promise<number> {
  let deleted = 0
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
    if (keys.length > 0) deleted += await client.unlink(keys)
  }
  return deleted
}
