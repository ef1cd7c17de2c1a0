/**
 * The OpenID Connect parameters of an authorization request that shape the host's login page:
 * `prompt`, `max_age` and `login_hint` (OpenID Connect Core §3.1.2.1).
 *
 * @module
 */
import { OAuthError } from './error.ts'
import { type Parameters, parameter } from './form.ts'
import { LIMITS } from './limits.ts'

const PROMPTS: readonly string[] = ['none', 'login', 'consent', 'select_account']

/**
 * `prompt`, `max_age` and `login_hint` (OpenID Connect Core §3.1.2.1), for the host's login
 * page. `prompt=none` asks for an answer without any page; the server keeps no session of its
 * own (the host does), so it cannot know the user is signed in, and answers `login_required`.
 * Throws the OAuthError to redirect with.
 *
 * @example
 * ```ts
 * openIdParameters(parseUrlEncoded('prompt=login&max_age=300')!) // { prompt: ['login'], maxAge: 300, loginHint: undefined }
 * ```
 */
export function openIdParameters(query: Parameters): {
  prompt: readonly string[] | undefined
  maxAge: number | undefined
  loginHint: string | undefined
} {
  const promptText = parameter(query, 'prompt', LIMITS.shortParameter)
  const prompts = promptText?.split(' ').filter((value) => value !== '') ?? []
  const unknown = prompts.find((value) => !PROMPTS.includes(value))
  if (unknown !== undefined) {
    throw new OAuthError('invalid_request', `The prompt value ${unknown.slice(0, 32)} is unknown.`)
  }
  if (prompts.includes('none')) {
    // OpenID Connect Core §3.1.2.1: none with any other value is an error.
    if (prompts.length > 1) {
      throw new OAuthError('invalid_request', 'prompt=none cannot be combined with other values.')
    }
    throw new OAuthError('login_required', 'The user must sign in: prompt=none cannot be honoured.')
  }
  const maxAgeText = parameter(query, 'max_age', LIMITS.shortParameter)
  if (maxAgeText !== undefined && !/^[0-9]{1,10}$/.test(maxAgeText)) {
    throw new OAuthError('invalid_request', 'max_age is a whole number of seconds.')
  }
  return {
    prompt: prompts.length === 0 ? undefined : [...new Set(prompts)],
    maxAge: maxAgeText === undefined ? undefined : Number(maxAgeText),
    loginHint: parameter(query, 'login_hint', LIMITS.state),
  }
}
