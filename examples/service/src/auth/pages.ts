// The login and consent pages of the authorisation server (docs/service.md, "OAuth"): plain
// HTML forms that work without JavaScript. /authorize hands the browser to
// GET /login?interaction=<id>; the user signs in (POST /login), sees what the client asks for
// (GET /consent), approves or refuses (POST /consent), and the authorisation server sends the
// browser back to the client with a code (completeInteraction) or access_denied.
import type { Handler } from '@api-blocks/http'
import { methods } from '@api-blocks/http'
import type { AuthorizationServer, InteractionDetails } from '@api-blocks/oauth'
import { rateLimitKey } from '@api-blocks/rate-limit'
import type { UserDirectory } from './accounts.ts'
import { API_SCOPES, OIDC_SCOPES } from './accounts.ts'
import { checkSameOrigin, FormError, field, readForm } from './forms.ts'
import type { Raw } from './html.ts'
import { html, page, seeOther } from './html.ts'
import type { PasswordChecker } from './passwords.ts'
import { PasswordCheckBusyError } from './passwords.ts'
import type { Session, SessionStore } from './session.ts'
import { csrfMatches } from './session.ts'
import type { LoginThrottle } from './throttle.ts'

/**
 * What the pages need of the authorisation server (a part of @api-blocks/oauth's). Each call
 * takes the page's request: its Cookie header carries the per-interaction cookie /authorize set,
 * which binds the interaction to the browser that started it.
 */
type InteractionHost = Pick<
  AuthorizationServer,
  'interaction' | 'completeInteraction' | 'denyInteraction'
>

/** Options of {@link authPages}. */
export interface AuthPagesOptions {
  server: InteractionHost
  users: UserDirectory
  sessions: SessionStore
  /** Checks passwords, a few at a time (its parameters hide which names exist). */
  passwords: PasswordChecker
  /** Failed sign-ins per user name, with a growing lock. */
  throttle: LoginThrottle
  /** The service's public URL (the issuer): the pages' links and the Origin POSTs must carry. */
  publicUrl: string
  clock: () => number
  /** The largest form accepted, in bytes (default 8 KiB). */
  maxFormBytes?: number
}

const MAX_ID = 200

/** The `/login` and `/consent` routes. */
export function authPages(options: AuthPagesOptions): Record<string, Handler> {
  const { server, users, sessions, passwords, throttle, publicUrl, clock } = options
  const maxFormBytes = options.maxFormBytes ?? 8 * 1024
  const origin = new URL(publicUrl).origin
  const loginUrl = (id: string) => `${publicUrl}/login?interaction=${encodeURIComponent(id)}`
  const consentUrl = (id: string) => `${publicUrl}/consent?interaction=${encodeURIComponent(id)}`

  // The client address as the rate limit keys it (IPv6 masked to /56); none when it is unknown
  // (every browser would then share one address's few sessions).
  const addressOf = async (request: Request): Promise<string | undefined> => {
    const key = await rateLimitKey(request, { principal: null })
    return key === 'ip:unknown' ? undefined : key
  }

  const interactionParam = (request: Request): string => {
    const values = new URL(request.url).searchParams.getAll('interaction')
    if (values.length !== 1 || (values[0] ?? '').length > MAX_ID || values[0] === '') {
      throw new FormError(400, 'This page needs exactly one interaction.')
    }
    return values[0] as string
  }
  const details = async (id: string, request: Request): Promise<InteractionDetails> => {
    const found = id === '' ? undefined : await server.interaction(id, request)
    if (!found) {
      throw new FormError(
        400,
        'This sign-in request is unknown or has expired. Go back to the application and start again.',
      )
    }
    return found
  }

  // OpenID Connect Core §3.1.2.1: `prompt=login` asks for a new sign-in even with a session,
  // `max_age` for one at most that many seconds old. A sign-in made for this very interaction
  // is the fresh one both ask for (the authorisation server makes the final max_age check when
  // the user approves, and answers login_required if the consent page took too long).
  const signedIn = (
    session: Session | undefined,
    interaction: InteractionDetails,
  ): session is Session & { subject: string; authTime: number } => {
    if (session?.subject === undefined || session.authTime === undefined) return false
    if (session.signedInFor === interaction.id) return true
    if (interaction.prompt?.includes('login')) return false
    if (interaction.maxAge !== undefined) {
      return session.authTime >= Math.floor(clock() / 1000) - interaction.maxAge
    }
    return true
  }

  const loginForm = (
    id: string,
    session: Session,
    clientName: string,
    extra: { username?: string; error?: string } = {},
  ): Raw => html`<p>Sign in to continue to <strong>${clientName}</strong>.</p>
${extra.error ? html`<p class="error" role="alert" id="login-error">${extra.error}</p>` : ''}
<form method="post" action="login">
<input type="hidden" name="interaction" value="${id}">
<input type="hidden" name="csrf" value="${session.csrf}">
<label for="username">User name</label>
<input type="text" id="username" name="username" autocomplete="username" required maxlength="64" value="${extra.username ?? ''}"${extra.error ? html` aria-describedby="login-error"` : ''}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required maxlength="1024">
<button type="submit">Sign in</button>
</form>`

  const showLogin = async (request: Request): Promise<Response> => {
    const id = interactionParam(request)
    const interaction = await details(id, request)
    const current = sessions.find(request)
    if (signedIn(current, interaction)) return seeOther(consentUrl(id))
    // A live session is kept (one signed in too long ago for max_age stays signed in for other
    // clients until the user signs in again); a new one only when there is none. Signing in
    // starts a new one anyway (fixation).
    // One address holds a bounded number of sessions not signed in (session.ts): a flood of
    // login pages from one place pushes out its own, never other users'.
    const { session, setCookie } = current
      ? { session: current, setCookie: undefined }
      : sessions.start(request, undefined, await addressOf(request))
    // OpenID Connect Core §3.1.2.1: login_hint prefills the user name (the user may change it).
    const hint = interaction.loginHint
    return page(
      'Sign in',
      loginForm(id, session, nameOf(interaction.client), {
        ...(hint !== undefined && hint.length <= 64 ? { username: hint } : {}),
      }),
      setCookie ? { headers: { 'set-cookie': setCookie } } : {},
    )
  }

  const submitLogin = async (request: Request): Promise<Response> => {
    checkSameOrigin(request, origin)
    const form = await readForm(request, maxFormBytes)
    const id = field(form, 'interaction', MAX_ID)
    const interaction = await details(id, request)
    const session = sessions.find(request)
    if (!session || !csrfMatches(session, form.get('csrf'))) {
      // No session (cookies off, or it expired) or a forged form: a fresh form to try again.
      const fresh = sessions.start(request, undefined, await addressOf(request))
      return page(
        'Sign in',
        loginForm(id, fresh.session, nameOf(interaction.client), {
          error: 'Your session expired. Please sign in again.',
        }),
        { status: 403, headers: { 'set-cookie': fresh.setCookie } },
      )
    }
    const username = field(form, 'username', 64)
    const password = field(form, 'password', 1024)
    // A name locked after repeated failures (throttle.ts) is not checked at all; the wording is
    // the same for every name, known or not.
    const wait = throttle.retryAfter(username)
    if (wait !== undefined) {
      throw new FormError(429, 'Too many failed sign-ins. Please wait and try again later.', {
        'retry-after': String(wait),
      })
    }
    const user = users.byUsername(username)
    let valid: boolean
    try {
      valid = await passwords.verify(user?.passwordHash, password, request.signal)
    } catch (error) {
      if (error instanceof PasswordCheckBusyError) {
        throw new FormError(503, 'Too many sign-ins at once. Please try again in a moment.', {
          'retry-after': '1',
        })
      }
      // The browser went away while the check waited for its turn: no one reads this answer.
      if (request.signal.aborted) throw new FormError(400, 'The request was cancelled.')
      throw error
    }
    if (!user || !valid) throttle.failed(username)
    else throttle.succeeded(username)
    if (!user || !valid) {
      // One message for an unknown name and a wrong password: the page says nothing about
      // which names exist.
      return page(
        'Sign in',
        loginForm(id, session, nameOf(interaction.client), {
          username,
          error: 'The user name or password is not right.',
        }),
        { status: 401 },
      )
    }
    // A new session id on sign-in: one planted before it is worth nothing now (fixation).
    const { setCookie } = sessions.start(request, {
      subject: user.subject,
      authTime: Math.floor(clock() / 1000),
      signedInFor: id,
    })
    return seeOther(consentUrl(id), { 'set-cookie': setCookie })
  }

  const showConsent = async (request: Request): Promise<Response> => {
    const id = interactionParam(request)
    const interaction = await details(id, request)
    const session = sessions.find(request)
    if (!signedIn(session, interaction)) return seeOther(loginUrl(id))
    const user = users.account(session.subject)
    const client = nameOf(interaction.client)
    const items = interaction.scopes.map((scope) =>
      scope === 'openid'
        ? html`<li>${describe(scope)} <input type="hidden" name="scope" value="openid"></li>`
        : html`<li><input type="checkbox" id="scope-${scope}" name="scope" value="${scope}" checked> <label for="scope-${scope}">${describe(scope)} (<code>${scope}</code>)</label></li>`,
    )
    return page(
      'Allow access?',
      html`<p>Signed in as <strong>${user?.username ?? session.subject}</strong>.</p>
<form method="post" action="consent">
<input type="hidden" name="interaction" value="${id}">
<input type="hidden" name="csrf" value="${session.csrf}">
<fieldset>
<legend><strong>${client}</strong> asks to:</legend>
<ul>${items}</ul>
</fieldset>
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
      { formTargets: originsOf([interaction.redirectUri]) },
    )
  }

  const submitConsent = async (request: Request): Promise<Response> => {
    checkSameOrigin(request, origin)
    const form = await readForm(request, maxFormBytes, ['scope'])
    const id = field(form, 'interaction', MAX_ID)
    const session = sessions.find(request)
    if (!session || !csrfMatches(session, form.get('csrf'))) {
      throw new FormError(403, 'Your session expired. Go back to the application and start again.')
    }
    if (session.subject === undefined) return seeOther(loginUrl(id))
    const decision = field(form, 'decision', 10)
    if (decision !== 'approve' && decision !== 'deny') {
      throw new FormError(400, 'Choose Allow or Deny.')
    }
    const interaction = await details(id, request)
    if (decision === 'deny') return server.denyInteraction(id, request)
    // A sign-in too old for max_age (or not the new one prompt=login asked for): sign in again.
    if (!signedIn(session, interaction)) return seeOther(loginUrl(id))
    // Only what was asked and is ticked is bound to the tokens; `openid` has no box (signing
    // in is what was asked for). Nothing ticked is a refusal: the client gets access_denied.
    const ticked = new Set(form.getAll('scope'))
    const scopes = interaction.scopes.filter((scope) => scope === 'openid' || ticked.has(scope))
    // auth_time (OpenID Connect Core §2) is when the user really signed in, not now.
    return server.completeInteraction(
      id,
      { subject: session.subject, scopes, authTime: session.authTime },
      request,
    )
  }

  // A refused form or an unknown interaction is a page too, never a problem+json.
  const guarded =
    (handler: Handler): Handler =>
    async (request) => {
      try {
        return await handler(request)
      } catch (error) {
        if (!(error instanceof FormError)) throw error
        return page('Something went wrong', html`<p role="alert">${error.message}</p>`, {
          status: error.status,
          headers: error.headers,
        })
      }
    }

  return {
    '/login': methods({ GET: guarded(showLogin), POST: guarded(submitLogin) }),
    '/consent': methods({ GET: guarded(showConsent), POST: guarded(submitConsent) }),
  }
}

function nameOf(client: { id: string; name?: string | undefined }): string {
  return client.name ?? client.id
}

function describe(scope: string): string {
  return API_SCOPES[scope] ?? OIDC_SCOPES[scope] ?? scope
}

function originsOf(uris: readonly string[]): string[] {
  const origins = new Set<string>()
  for (const uri of uris) {
    try {
      origins.add(new URL(uri).origin)
    } catch {
      // A registered URI is absolute (the configuration checks it); nothing to add otherwise.
    }
  }
  return [...origins]
}
