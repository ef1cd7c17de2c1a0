// The suite's own parts, without an adapter: the handler answers what the suite expects when
// called directly, and the raw client reads field lines as sent.
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { ProblemError } from '@api-blocks/problem-details'
import { describe, expect, test } from 'vitest'
import { fieldValues, rawExchange } from '../src/client.ts'
import type { SuiteState } from '../src/handler.ts'
import { BODY_LIMIT_BYTES, suiteHandler } from '../src/handler.ts'
import { adapterRules, ruleTitle } from '../src/rules.ts'
import { runAdapterSuite } from '../src/suite.ts'

const state: SuiteState = { gates: new Map(), disconnects: new Map() }
const handler = suiteHandler(state)
const call = (path: string, init?: RequestInit) => handler(new Request(`http://test${path}`, init))

describe('suiteHandler', () => {
  test('the limited route answers 413 past the limit and the length below it', async () => {
    const over = await call('/limited', {
      method: 'POST',
      body: new Uint8Array(BODY_LIMIT_BYTES + 1),
    })
    expect(over.status).toBe(413)
    expect(await over.json()).toMatchObject({ max_bytes: BODY_LIMIT_BYTES })
    const under = await call('/limited', { method: 'POST', body: new Uint8Array(BODY_LIMIT_BYTES) })
    expect(await under.json()).toEqual({ length: BODY_LIMIT_BYTES })
  })

  test('the digest route hashes what it read', async () => {
    const body = new TextEncoder().encode('digest me')
    const response = await call('/digest', { method: 'POST', body })
    expect(await response.json()).toEqual({
      length: 9,
      sha256: createHash('sha256').update(body).digest('hex'),
    })
  })

  test('the large route produces exactly the requested length', async () => {
    const response = await call('/large/200003')
    expect((await response.arrayBuffer()).byteLength).toBe(200003)
  })

  test('the error routes throw a ProblemError and a plain Error', async () => {
    await expect(call('/problem')).rejects.toBeInstanceOf(ProblemError)
    await expect(call('/crash')).rejects.toThrow(/hunter2/)
  })
})

test('rawExchange reports every field line as sent', async () => {
  const server = createServer((_req, res) => {
    res.writeHead(200, ['Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'X-One', 'x'])
    res.end('body')
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  try {
    const { port } = server.address() as { port: number }
    const raw = await rawExchange(`http://127.0.0.1:${port}`, 'GET / HTTP/1.1')
    expect(raw.statusLine).toBe('HTTP/1.1 200 OK')
    expect(fieldValues(raw, 'set-cookie')).toEqual(['a=1', 'b=2'])
    expect(raw.rest.toString()).toContain('body')
  } finally {
    server.close()
  }
})

describe('adapterRules', () => {
  test('ids are unique and kebab-case, levels MUST or SHOULD', () => {
    const ids = adapterRules.map((rule) => rule.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const rule of adapterRules) {
      expect(rule.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)
      expect(['MUST', 'SHOULD']).toContain(rule.level)
    }
  })

  test('a test title names the rule, and an unknown id is refused', () => {
    expect(ruleTitle('set-cookie-lines')).toBe(
      '[set-cookie-lines] MUST send each Set-Cookie as its own field line',
    )
    expect(() => ruleTitle('no-such-rule')).toThrow(/no-such-rule/)
  })
})

test('only a SHOULD rule can be declared a known exception', () => {
  const start = async () => ({ url: 'http://127.0.0.1:1', close: async () => {} })
  expect(() => runAdapterSuite('refused', start, { exceptions: { head: 'no' } })).toThrow(
    /"head" is MUST/,
  )
  expect(() => runAdapterSuite('refused', start, { exceptions: { nothing: 'no' } })).toThrow(
    /"nothing" is no rule/,
  )
})
