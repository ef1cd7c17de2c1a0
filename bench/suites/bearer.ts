// Issue 14: verifying a bearer JWT access token (RFC 9068, ES256), @api-blocks/bearer's
// createTokenVerifier against a bare jose `jwtVerify` with the key imported once (the least a
// resource server can do). Target: ours at most 1.15x jose's time.
//
// Same process, same token, same checks asked of both: the ES256 signature with the algorithm
// pinned, `typ: at+jwt`, `iss`, `aud`, `exp` with 30 s of tolerance. Ours also builds the
// Principal (subject, client, scopes) that the middleware hands on; jose answers the payload.
// The verifier gets its key as a static public JWK (no JWKS fetch: the JWKS path differs only
// when the key is first fetched or rotated). In this process, pinned to CPU 1 where `taskset`
// exists: PAIRS pairs of batches of BATCH verifications, ours and jose's interleaved (the order
// alternating), each batch timed by this process's CPU time (all threads: WebCrypto verifies on
// the thread pool), so that what else the machine runs weighs on neither; the table shows the median CPU time per verification and the median of the
// per-pair ratios with their interquartile range.
import { createTokenVerifier } from '@api-blocks/bearer'
import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose'
import { median, pinClient } from '../service-process.ts'

const PAIRS = Number(process.env['BEARER_BENCH_PAIRS'] ?? 400)
const BATCH = 20
const ISSUER = 'https://as.example'
const AUDIENCE = 'https://api.example'

export default async function run(): Promise<void> {
  pinClient() // one CPU (1, where taskset exists) for both: no migration between tasks
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  const now = Math.floor(Date.now() / 1000)
  const token = await new SignJWT({
    client_id: 'demo-backend',
    scope: 'read:orders write:orders',
    jti: 'Wl0x9bU8WmT9Qf1kR2yP3A',
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setSubject('ada')
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(privateKey)
  const jwk = { ...(await exportJWK(publicKey)), kty: 'EC', kid: 'k1', alg: 'ES256', use: 'sig' }
  const verifier = createTokenVerifier({
    jwt: { issuer: ISSUER, audience: AUDIENCE, keys: [jwk], algorithms: ['ES256'] },
  })
  const options = {
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['ES256'],
    typ: 'at+jwt',
    clockTolerance: 30,
  }
  // Both accept the token before anything is timed.
  const principal = await verifier.verify(token)
  if (principal.clientId !== 'demo-backend') throw new Error('ours did not verify the token')
  await jwtVerify(token, publicKey, options)

  let sink = 0
  const tasks = {
    ours: async () => {
      sink += (await verifier.verify(token)).scopes.length
    },
    jose: async () => {
      sink += (await jwtVerify(token, publicKey, options)).payload.exp ?? 0
    },
  }
  // This process's CPU time, µs, all threads: what the verification costs, whatever else the
  // machine runs (wall time on this shared machine moved by ±50 % between runs of one second).
  // All threads, since WebCrypto runs the signature check itself on libuv's thread pool.
  const cpu = () => {
    const usage = process.cpuUsage()
    return usage.user + usage.system
  }
  const batch = async (name: keyof typeof tasks) => {
    const task = tasks[name]
    const before = cpu()
    for (let i = 0; i < BATCH; i += 1) await task()
    return (cpu() - before) / BATCH
  }
  for (let i = 0; i < 50; i += 1) await Promise.all([batch('ours'), batch('jose')]) // warm-up
  const samples: Record<keyof typeof tasks, number[]> = { ours: [], jose: [] }
  const ratios: number[] = []
  for (let pair = 0; pair < PAIRS; pair += 1) {
    const order = pair % 2 === 0 ? (['ours', 'jose'] as const) : (['jose', 'ours'] as const)
    const times = { ours: 0, jose: 0 }
    for (const name of order) times[name] = await batch(name)
    samples.ours.push(times.ours)
    samples.jose.push(times.jose)
    ratios.push(times.ours / times.jose)
  }
  const quartiles = (values: readonly number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    const at = (q: number) => (sorted[Math.floor(q * (sorted.length - 1))] as number).toFixed(3)
    return `${at(0.25)}–${at(0.75)}`
  }
  console.log(
    `ES256 JWT access token, ${PAIRS} interleaved pairs of ${BATCH}-verification batches, process CPU time, medians (lower is better)`,
  )
  console.log(
    '| verifier | CPU µs per token | ours / jose, median of the pairs (interquartile range) |',
  )
  console.log('|---|---:|---:|')
  console.log(`| jose \`jwtVerify\`, key imported once | ${median(samples.jose).toFixed(1)} | — |`)
  console.log(
    `| @api-blocks/bearer \`createTokenVerifier\` | ${median(samples.ours).toFixed(1)} | ${median(ratios).toFixed(3)} (${quartiles(ratios)}) |`,
  )
  console.log('(target: ours / jose <= 1.15)')
  if (sink === -1) console.log(sink)
}
