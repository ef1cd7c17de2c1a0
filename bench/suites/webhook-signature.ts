// Issue 15: signing and verifying Standard Webhooks signatures at 1 KiB and 64 KiB,
// @api-blocks/webhook-signature against the `standardwebhooks` package (1.1.1) and `svix`'s
// Webhook class (2.5.0, which wraps standardwebhooks' Webhook), and against the limit: a bare
// node:crypto `createHmac` with the key made once into a KeyObject (`createSecretKey`) over the
// same signed content (`id.timestamp.` then the body), base64, and `timingSafeEqual` for verify.
// Targets: ours at least 3x faster than both peers, and at most 1.25x the limit.
//
// What each one is given is what it is given in use. Sign: the payload as the string the sender
// serialised (ours signs its UTF-8). Verify: the raw body as a Buffer (what a server reads; the
// peers turn it back into text, ours hashes the bytes), the three header fields as a record, one
// secret, the clock at the timestamp. All compute the same signature (checked before timing).
//
// In this process, pinned to CPU 1 where `taskset` exists: PAIRS rounds in which every
// implementation runs one batch (the order rotating), each batch timed by this process's CPU
// time, so what else the machine runs weighs on none; the table shows the median CPU time per
// operation and the medians of the per-round ratios (interquartile range).
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto'
import { createSigner, createVerifier } from '@api-blocks/webhook-signature'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import { median, pinClient } from '../service-process.ts'

const PAIRS = Number(process.env['WEBHOOK_SIGNATURE_BENCH_PAIRS'] ?? 200)
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek'
const TIMESTAMP = 1_614_265_330

type Name = 'ours' | 'standardwebhooks' | 'svix' | 'limit'
const NAMES: readonly Name[] = ['ours', 'standardwebhooks', 'svix', 'limit']
type Task = () => unknown

// A JSON body of exactly `size` bytes of ASCII (the peers decode the body as text).
function payloadOf(size: number): string {
  const head = '{"type":"order.created","data":{"object":{"note":"'
  const tail = '"}}}'
  let filler = ''
  for (let index = 0; filler.length < size - head.length - tail.length; index += 1) {
    filler += String.fromCharCode(97 + (index % 26))
  }
  return head + filler + tail
}

// This process's CPU time, µs (user + system).
const cpu = () => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

async function time(task: Task, batch: number): Promise<number> {
  const before = cpu()
  for (let index = 0; index < batch; index += 1) await task()
  return (cpu() - before) / batch
}

const quartiles = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => (sorted[Math.floor(q * (sorted.length - 1))] as number).toFixed(2)
  return `${at(0.25)}–${at(0.75)}`
}

async function compare(label: string, tasks: Record<Name, Task>, batchOf: Record<Name, number>) {
  for (let round = 0; round < 20; round += 1) {
    for (const name of NAMES) await time(tasks[name], batchOf[name]) // warm-up
  }
  const samples: Record<Name, number[]> = { ours: [], standardwebhooks: [], svix: [], limit: [] }
  const toLimit: number[] = []
  const speedup: Record<'standardwebhooks' | 'svix', number[]> = { standardwebhooks: [], svix: [] }
  for (let round = 0; round < PAIRS; round += 1) {
    const times = {} as Record<Name, number>
    for (let step = 0; step < NAMES.length; step += 1) {
      const name = NAMES[(round + step) % NAMES.length] as Name
      times[name] = await time(tasks[name], batchOf[name])
    }
    for (const name of NAMES) samples[name].push(times[name])
    toLimit.push(times.ours / times.limit)
    speedup.standardwebhooks.push(times.standardwebhooks / times.ours)
    speedup.svix.push(times.svix / times.ours)
  }
  console.log(`\n${label}, ${PAIRS} rounds, process CPU time, medians`)
  console.log('| implementation | CPU µs per operation | ratio, median of the rounds (IQR) |')
  console.log('|---|---:|---:|')
  console.log(
    `| bare node:crypto, the limit | ${median(samples.limit).toFixed(2)} | ours / limit ${median(toLimit).toFixed(3)} (${quartiles(toLimit)}) |`,
  )
  console.log(`| @api-blocks/webhook-signature | ${median(samples.ours).toFixed(2)} | — |`)
  for (const peer of ['standardwebhooks', 'svix'] as const) {
    console.log(
      `| ${peer} | ${median(samples[peer]).toFixed(2)} | ${peer} / ours ${median(speedup[peer]).toFixed(2)}x (${quartiles(speedup[peer])}) |`,
    )
  }
}

export default async function run(): Promise<void> {
  pinClient()
  const key = createSecretKey(Buffer.from(SECRET.slice('whsec_'.length), 'base64'))
  const signer = createSigner({ secret: SECRET })
  const verifier = createVerifier({ secrets: SECRET, clock: () => TIMESTAMP * 1000 })
  const standard = new StandardWebhook(SECRET)
  const svix = new SvixWebhook(SECRET)
  const date = new Date(TIMESTAMP * 1000)
  // The peers read the clock themselves (Date.now): verify with a timestamp of now for them.
  const now = Math.floor(Date.now() / 1000)
  let sink = 0

  for (const size of [1024, 65_536]) {
    const payload = payloadOf(size)
    const raw = Buffer.from(payload)
    if (raw.byteLength !== size) throw new Error(`payload of ${raw.byteLength} bytes`)
    const limitMac = (timestamp: number, body: string | Buffer) =>
      createHmac('sha256', key).update(`${ID}.${timestamp}.`).update(body).digest()
    const expected = `v1,${limitMac(TIMESTAMP, payload).toString('base64')}`
    const ourHeaders = await signer.sign({ id: ID, timestamp: TIMESTAMP, body: payload })
    if (ourHeaders['webhook-signature'] !== expected) throw new Error('ours signs differently')
    if (standard.sign(ID, date, payload) !== expected) throw new Error('standardwebhooks differs')
    if (svix.sign(ID, date, payload) !== expected) throw new Error('svix differs')

    // Larger batches for the cheap ones, so each batch takes about a millisecond or more.
    const fast = size === 1024 ? 200 : 20
    const slow = size === 1024 ? 40 : 2
    const batchOf: Record<Name, number> = {
      ours: fast,
      limit: fast,
      standardwebhooks: slow,
      svix: slow,
    }

    await compare(
      `sign, ${size / 1024} KiB`,
      {
        ours: async () => {
          const headers = await signer.sign({ id: ID, timestamp: TIMESTAMP, body: payload })
          sink += headers['webhook-signature'].length
        },
        standardwebhooks: () => {
          sink += standard.sign(ID, date, payload).length
        },
        svix: () => {
          sink += svix.sign(ID, date, payload).length
        },
        limit: () => {
          sink += `v1,${limitMac(TIMESTAMP, payload).toString('base64')}`.length
        },
      },
      batchOf,
    )

    const peerHeaders = {
      'webhook-id': ID,
      'webhook-timestamp': String(now),
      'webhook-signature': `v1,${limitMac(now, raw).toString('base64')}`,
    }
    standard.verify(raw, peerHeaders)
    svix.verify(raw, peerHeaders)
    await verifier.verify(ourHeaders, raw)
    await compare(
      `verify, ${size / 1024} KiB`,
      {
        ours: async () => {
          sink += (await verifier.verify(ourHeaders, raw)).timestamp
        },
        standardwebhooks: () => {
          standard.verify(raw, peerHeaders)
          sink += 1
        },
        svix: () => {
          svix.verify(raw, peerHeaders)
          sink += 1
        },
        limit: () => {
          // What a bare receiver must do at the least: take the fields, compute the MAC,
          // decode the received one and compare in constant time.
          const id = ourHeaders['webhook-id']
          const timestamp = ourHeaders['webhook-timestamp']
          const field = ourHeaders['webhook-signature']
          const received = Buffer.from(field.slice(3), 'base64')
          const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(raw).digest()
          if (!(received.byteLength === mac.byteLength && timingSafeEqual(received, mac))) {
            throw new Error('the limit did not verify')
          }
          sink += 1
        },
      },
      batchOf,
    )
  }
  console.log('(targets: standardwebhooks / ours and svix / ours >= 3, ours / limit <= 1.25)')
  if (sink === -1) console.log(sink)
}
