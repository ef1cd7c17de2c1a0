// @api-blocks/conditional against jshttp `fresh` (If-None-Match / If-Modified-Since freshness)
// and jshttp `etag` (tag generation), on the same inputs in one process run.
//
// Both sides get Node-style lower-case header records, as `fresh` expects. `fresh` answers a
// boolean for GET freshness only; evaluatePreconditions runs all of RFC 9110 §13.2.2, so the
// comparison is of the work a GET needs. Each sample runs BATCH calls, so timer resolution does
// not dominate sub-microsecond operations.
import { createRequire } from 'node:module'
import {
  etagFromBody,
  etagFromVersion,
  evaluatePreconditions,
  weakCompare,
} from '@api-blocks/conditional'
import { Bench } from 'tinybench'

type HeaderRecord = Record<string, string | undefined>
const require = createRequire(import.meta.url)
const fresh = require('fresh') as (request: HeaderRecord, response: HeaderRecord) => boolean
const etag = require('etag') as (entity: string | Buffer, options?: { weak?: boolean }) => string

const BATCH = 100
const TIME_MS = 500
let sink = 0

const current = '"6a1b2c3d4e"'
const lastModified = 'Thu, 01 Jan 2026 12:00:00 GMT'
const lastModifiedMs = Date.UTC(2026, 0, 1, 12)
const others = ['"0f0f0f"', '"1e1e1e"', '"2d2d2d"', '"3c3c3c"']

interface Case {
  name: string
  request: HeaderRecord
}

const cases: Case[] = [
  { name: 'INM 1 tag, match', request: { 'if-none-match': current } },
  { name: 'INM 1 tag, miss', request: { 'if-none-match': others[0] } },
  { name: 'INM 5 tags, match last', request: { 'if-none-match': [...others, current].join(', ') } },
  { name: 'INM 5 tags, miss', request: { 'if-none-match': [...others, '"4b4b4b"'].join(', ') } },
  { name: 'INM weak vs strong, match', request: { 'if-none-match': `W/${current}` } },
  {
    name: 'INM 5 weak tags, match',
    request: { 'if-none-match': [...others, current].map((tag) => `W/${tag}`).join(', ') },
  },
  { name: 'IMS not modified', request: { 'if-modified-since': lastModified } },
  { name: 'IMS modified', request: { 'if-modified-since': 'Wed, 31 Dec 2025 12:00:00 GMT' } },
  { name: 'INM "*"', request: { 'if-none-match': '*' } },
  { name: 'unconditional', request: {} },
]

// Header values arrive from the HTTP parser as flat latin1 strings; template literals and
// join() build rope (cons) strings instead, whose characters are slower to read. Flatten every
// input the way node:http would hand it over, for both libraries.
const flat = (value: string): string => Buffer.from(value, 'latin1').toString('latin1')
for (const entry of cases) {
  entry.request = Object.fromEntries(
    Object.entries(entry.request).map(([name, value]) => [name, flat(value ?? '')]),
  )
}

const responseHeaders: HeaderRecord = { etag: current, 'last-modified': lastModified }
const validators = { etag: current, lastModified: lastModifiedMs }

function opsPerSecond(bench: Bench, name: string): number {
  const task = bench.getTask(name)
  const result = task?.result
  if (result === undefined || !('period' in result)) throw new Error(`${name} did not complete`)
  return (1000 / result.period) * BATCH
}

function row(name: string, ours: number, theirs: number): Record<string, string> {
  return {
    case: name,
    'ours ops/s': Math.round(ours).toLocaleString('en-US'),
    'theirs ops/s': Math.round(theirs).toLocaleString('en-US'),
    'ours/theirs': (ours / theirs).toFixed(2),
  }
}

export default async function (): Promise<void> {
  // Both libraries must agree before their speed means anything.
  for (const { name, request } of cases) {
    const ours = evaluatePreconditions('GET', request, validators).outcome === 'not-modified'
    const theirs = fresh(request, responseHeaders)
    if (ours !== theirs) throw new Error(`${name}: ours ${ours}, fresh ${theirs}`)
  }

  // Node-style records first, on their own, as a Node server would call it; then Fetch
  // Headers (each get() goes through undici's validation, so it is slower for both kinds of
  // caller; fresh cannot take Headers at all).
  const bench = new Bench({ time: TIME_MS, warmupTime: 100 })
  for (const { name, request } of cases) {
    bench.add(`ours ${name}`, () => {
      for (let i = 0; i < BATCH; i++) {
        sink += evaluatePreconditions('GET', request, validators).outcome.length
      }
    })
    bench.add(`fresh ${name}`, () => {
      for (let i = 0; i < BATCH; i++) sink += fresh(request, responseHeaders) ? 1 : 0
    })
  }
  // One RFC 9110 §8.8.3.2 weak comparison of two wire-form tags. Ours validates both tags;
  // fresh's inline test (inside fresh(), repeated here) compares the raw strings.
  const tagged = flat(`W/${current}`)
  bench.add('ours weakCompare', () => {
    for (let i = 0; i < BATCH; i++) sink += weakCompare(tagged, current) ? 1 : 0
  })
  bench.add('fresh-style compare', () => {
    for (let i = 0; i < BATCH; i++) {
      sink += tagged === current || tagged === `W/${current}` || `W/${tagged}` === current ? 1 : 0
    }
  })
  await bench.run()

  const fetchBench = new Bench({ time: TIME_MS, warmupTime: 100 })
  for (const { name, request } of cases) {
    const headers = new Headers(request as Record<string, string>)
    fetchBench.add(`ours (Headers) ${name}`, () => {
      for (let i = 0; i < BATCH; i++) {
        sink += evaluatePreconditions('GET', headers, validators).outcome.length
      }
    })
  }
  await fetchBench.run()

  const rows = cases.map(({ name }) =>
    row(name, opsPerSecond(bench, `ours ${name}`), opsPerSecond(bench, `fresh ${name}`)),
  )
  rows.push(
    row(
      'weakCompare vs fresh inline compare',
      opsPerSecond(bench, 'ours weakCompare'),
      opsPerSecond(bench, 'fresh-style compare'),
    ),
  )
  rows.push(
    ...cases.map(({ name }) =>
      row(
        `${name} (ours with Fetch Headers)`,
        opsPerSecond(fetchBench, `ours (Headers) ${name}`),
        opsPerSecond(bench, `fresh ${name}`),
      ),
    ),
  )
  console.log('\nevaluatePreconditions (GET) vs fresh: ops/s, higher is better')
  console.table(rows)

  // Tag generation: the recommended path (a version the resource stores) and the opt-in
  // body-hash fallback, against jshttp etag (SHA-1 of the body, synchronous node:crypto).
  const body = JSON.stringify({
    data: Array.from({ length: 24 }, (_, i) => ({ id: i, name: `item ${i}`, price: i * 3.5 })),
  })
  const small = '{"id":1}'
  const tags = new Bench({ time: TIME_MS, warmupTime: 100 })
  tags.add('etagFromVersion', () => {
    for (let i = 0; i < BATCH; i++) sink += etagFromVersion(i).length
  })
  for (const [label, text] of [
    ['1 KiB', body],
    ['8 B', small],
  ] as const) {
    tags.add(`etag ${label}`, () => {
      for (let i = 0; i < BATCH; i++) sink += etag(text).length
    })
    tags.add(`etagFromBody ${label}`, async () => {
      for (let i = 0; i < BATCH; i++) sink += (await etagFromBody(text)).length
    })
  }
  await tags.run()
  console.log(`\nEntity-tag generation (body ${body.length} B): ops/s, higher is better`)
  console.table([
    row(
      'etagFromVersion vs etag(1 KiB body)',
      opsPerSecond(tags, 'etagFromVersion'),
      opsPerSecond(tags, 'etag 1 KiB'),
    ),
    row(
      'etagFromBody vs etag, 1 KiB body',
      opsPerSecond(tags, 'etagFromBody 1 KiB'),
      opsPerSecond(tags, 'etag 1 KiB'),
    ),
    row(
      'etagFromBody vs etag, 8 B body',
      opsPerSecond(tags, 'etagFromBody 8 B'),
      opsPerSecond(tags, 'etag 8 B'),
    ),
  ])
  if (sink === -1) console.log(sink)
}
