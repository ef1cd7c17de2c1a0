// Small pieces of the RFC 9110 §5.6 field grammar shared by every parser in this package.
// They never throw: a malformed member is reported as `undefined` and the caller skips it.

// RFC 9110 §5.6.2: token = 1*tchar
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/** Whether `value` is an RFC 9110 token (a field name, a method, a coding, a media type part). */
export function isToken(value: string): boolean {
  return TOKEN.test(value)
}

/** Parses an RFC 9110 §12.4.2 qvalue; `undefined` when malformed. */
export function parseQuality(value: string): number | undefined {
  return QVALUE.test(value) ? Number(value) : undefined
}

/**
 * Splits `value` on `separator` outside quoted strings (RFC 9110 §5.6.4, a backslash escapes
 * the next character inside quotes). Trims each part and drops empty ones (§5.6.1: empty list
 * elements are ignored). At most `max` parts are returned, so a hostile value cannot make a
 * huge array.
 */
export function splitOutsideQuotes(value: string, separator: ',' | ';', max: number): string[] {
  const parts: string[] = []
  const code = separator.charCodeAt(0)
  let start = 0
  let quoted = false
  for (let i = 0; i < value.length && parts.length < max; i++) {
    const c = value.charCodeAt(i)
    if (quoted) {
      if (c === 0x5c) i++
      else if (c === 0x22) quoted = false
    } else if (c === 0x22) {
      quoted = true
    } else if (c === code) {
      const part = value.slice(start, i).trim()
      if (part !== '') parts.push(part)
      start = i + 1
    }
  }
  if (parts.length < max && start <= value.length) {
    const last = value.slice(start).trim()
    if (last !== '') parts.push(last)
  }
  return parts
}

/**
 * Reads a parameter value (RFC 9110 §5.6.6: token / quoted-string); `undefined` when it is
 * neither.
 */
export function parseParameterValue(raw: string): string | undefined {
  if (raw.startsWith('"')) {
    if (raw.length < 2 || !raw.endsWith('"')) return undefined
    let out = ''
    for (let i = 1; i < raw.length - 1; i++) {
      let c = raw[i]!
      if (c === '\\') {
        i++
        if (i >= raw.length - 1) return undefined
        c = raw[i]!
      } else if (c === '"') {
        return undefined
      }
      out += c
    }
    return out
  }
  return isToken(raw) ? raw : undefined
}

/** Formats a parameter value as a token when it is one, else as a quoted-string. */
export function formatParameterValue(value: string): string {
  return isToken(value) ? value : `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
}

/**
 * Parses `name=value` parameters (already split on ";"). Names are lowercased. Returns
 * `undefined` when any parameter is malformed.
 */
export function parseParameters(parts: readonly string[]): Array<[string, string]> | undefined {
  const parameters: Array<[string, string]> = []
  for (const part of parts) {
    const eq = part.indexOf('=')
    if (eq <= 0) return undefined
    const name = part.slice(0, eq).trimEnd().toLowerCase()
    const value = parseParameterValue(part.slice(eq + 1).trimStart())
    if (!isToken(name) || value === undefined) return undefined
    parameters.push([name, value])
  }
  return parameters
}
