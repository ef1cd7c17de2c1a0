// @hono/node-server replaces the global Request and Response when it starts serving, and so
// does @api-blocks/node with `lightweight: true`. Whichever comes first, both servers in one
// process answer correctly. Each order runs in a child process of its own, so the globals
// one replaces never leak into another test.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, test } from 'vitest'

const run = promisify(execFile)
const fixture = fileURLToPath(new URL('./fixtures/load-order.ts', import.meta.url))

const expected = {
  '/text': '200 text',
  '/json': '200 {"json":true}',
  '/fetched': '200 fetched',
  '/copy': '200 sent',
  '/body': '200 sent',
}

describe('load order with @hono/node-server', () => {
  test.each(['hono-first', 'hono-after'])(
    'MUST answer correctly from both servers, %s',
    async (order) => {
      const { stdout } = await run(
        process.execPath,
        ['--conditions=@api-blocks/source', fixture, order],
        { timeout: 30_000 },
      )
      expect(JSON.parse(stdout)).toEqual({
        hono: expected,
        node: expected,
        'node, lightweight': expected,
      })
    },
    30_000,
  )
})
