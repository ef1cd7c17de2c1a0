// `npm run oauth-secrets -- <command>`: what the OAuth configuration needs, made on this machine.
//   (no command)               OAUTH_TOKEN_KEY and OAUTH_SIGNING_KEYS lines for a shell or .env
//   token-key                  a new OAUTH_TOKEN_KEY (32 random bytes, base64url)
//   signing-key [ES256|RS256] [kid]  a new OAUTH_SIGNING_KEYS value (one private JWK)
//   client-secret              a new client secret (256 bits) and its hash for secretHashes
//   hash-secret                the hash of a client secret read from stdin, for secretHashes
//   hash-password              the scrypt hash of a password read from stdin, for passwordHash
// Secrets are read from stdin, never from the command line (which shells and ps keep).
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto'
import { text } from 'node:stream/consumers'
import { hashPassword } from './auth/passwords.ts'

const hashSecret = (secret: string) =>
  createHash('sha256').update(secret, 'utf8').digest('base64url')
const tokenKey = () => randomBytes(32).toString('base64url')

function signingKey(alg: string, kid: string): string {
  const { privateKey } =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return JSON.stringify([{ kid, alg, ...privateKey.export({ format: 'jwk' }) }])
}

async function readSecret(what: string): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write(`${what} (then Enter, Ctrl-D): `)
  const value = (await text(process.stdin)).replace(/\r?\n$/, '')
  if (value === '') throw new Error(`No ${what} on stdin.`)
  return value
}

const [command, ...args] = process.argv.slice(2)
const today = new Date().toISOString().slice(0, 7)
switch (command) {
  case undefined:
    console.log(`OAUTH_TOKEN_KEY=${tokenKey()}`)
    console.log(`OAUTH_SIGNING_KEYS='${signingKey('ES256', today)}'`)
    break
  case 'token-key':
    console.log(tokenKey())
    break
  case 'signing-key': {
    const alg = args[0] ?? 'ES256'
    if (alg !== 'ES256' && alg !== 'RS256') throw new Error('The algorithm is ES256 or RS256.')
    console.log(signingKey(alg, args[1] ?? today))
    break
  }
  case 'client-secret': {
    const secret = randomBytes(32).toString('base64url')
    console.log(`secret: ${secret}\nsecretHashes entry: ${hashSecret(secret)}`)
    break
  }
  case 'hash-secret':
    console.log(hashSecret(await readSecret('client secret')))
    break
  case 'hash-password':
    console.log(await hashPassword(await readSecret('password')))
    break
  default:
    console.error(
      'Commands: token-key, signing-key [ES256|RS256] [kid], client-secret, hash-secret, hash-password (see src/oauth-secrets.ts).',
    )
    process.exit(1)
}
