// Issue 14: verifying a bearer JWT access token (RFC 9068, ES256), @api-blocks/bearer's
// createTokenVerifier against a bare jose `jwtVerify` with the key imported once (the least a
// resource server can do). Target: ours at most 1.15x jose's time.
//
// Same process, same token, same checks asked of both: the ES256 signature with the algorithm
// pinned, `typ: at+jwt`, `iss`, `aud`, `exp` with 30 s of tolerance. Ours also builds the
// Principal (subject, client, scopes) that the middleware hands on; jose answers the payload.
// The verifier gets its key as a static public JWK (no JWKS fetch: the JWKS path differs only
// when the key is first fetched or rotated). ROUNDS rounds of tinybench, alternating which runs
// first, in this process pinned to CPU 1 where `taskset` exists; the table shows the median time
// per verification and the median of the per-round ratios.
import { createTokenVerifier } from '@api-blocks/bearer'
import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose'
import { Bench } from 'tinybench'
import { median, pinClient } from '../service-process.ts'

const ROUNDS = Number(process.env['BEARER_BENCH_ROUNDS'] ?? 11)
const TIME_MS = 700
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
  const samples: Record<keyof typeof tasks, number[]> = { ours: [], jose: [] }
  for (let round = 0; round < ROUNDS; round += 1) {
    const bench = new Bench({ time: TIME_MS, warmupTime: round === 0 ? 500 : 100 })
    const order = round % 2 === 0 ? (['ours', 'jose'] as const) : (['jose', 'ours'] as const)
    for (const name of order) bench.add(name, tasks[name])
    await bench.run()
    for (const name of order) {
      const result = bench.getTask(name)?.result
      if (result === undefined || !('period' in result)) throw new Error(`${name} failed`)
      samples[name].push(result.period * 1000) // µs
    }
  }
  const ratios = samples.ours.map((ours, index) => ours / (samples.jose[index] as number))
  console.log(
    `ES256 JWT access token, ${ROUNDS} rounds of ${TIME_MS} ms, medians (lower is better)`,
  )
  console.log('| verifier | µs per token | ours / jose (range) |')
  console.log('|---|---:|---:|')
  console.log(`| jose \`jwtVerify\`, key imported once | ${median(samples.jose).toFixed(1)} | — |`)
  console.log(
    `| @api-blocks/bearer \`createTokenVerifier\` | ${median(samples.ours).toFixed(1)} | ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}) |`,
  )
  console.log('(target: ours / jose <= 1.15)')
  if (sink === -1) console.log(sink)
}
