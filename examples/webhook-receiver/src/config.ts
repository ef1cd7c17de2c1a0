// The receiver's settings from the environment; anything invalid stops the start with a
// message naming the variable (never quoting a secret).

/** `whsec_` and base64: what POST /v1/webhook_endpoints and rotate_secret answer. */
const SECRET = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/

/**
 * `WEBHOOK_SECRET`: one `whsec_…` secret, or several comma-separated (during a rotation: the
 * new one and the old one, both verify).
 *
 * @example
 * ```ts
 * parseSecrets('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwJLuSb2H8z5A=') // ['whsec_MfKQ…']
 * ```
 */
export function parseSecrets(text: string | undefined): string[] {
  const secrets = (text ?? '')
    .split(',')
    .map((secret) => secret.trim())
    .filter((secret) => secret !== '')
  if (secrets.length === 0) {
    throw new Error(
      'WEBHOOK_SECRET must be set: the whsec_… secret the service answered when the endpoint was registered.',
    )
  }
  if (secrets.length > 4) throw new Error('WEBHOOK_SECRET holds more than 4 secrets.')
  for (const [index, secret] of secrets.entries()) {
    if (!SECRET.test(secret)) {
      throw new Error(`WEBHOOK_SECRET: secret ${index + 1} is not whsec_ followed by base64.`)
    }
  }
  return secrets
}

/**
 * A port number from the environment (`fallback` when unset).
 *
 * @example
 * ```ts
 * parsePort('RECEIVER_PORT', '4000', 4000) // 4000
 * ```
 */
export function parsePort(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback
  const port = Number(text)
  if (!/^\d+$/.test(text) || port > 65_535) {
    throw new Error(`${name} must be a port number, got "${text.slice(0, 20)}".`)
  }
  return port
}
