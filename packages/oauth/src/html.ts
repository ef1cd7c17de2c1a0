/**
 * The error page `/authorize` shows when it cannot trust the redirect URI (an unknown client, a
 * redirect URI not registered): RFC 6749 §4.1.2.1 says the server MUST NOT redirect then, and
 * tells the user instead. Small, accessible, escaped, and unframeable.
 *
 * @module
 */

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/**
 * `text` with `& < > " '` escaped, for HTML text and quoted attribute values.
 *
 * @example
 * ```ts
 * escapeHtml('<script>') // '&lt;script&gt;'
 * ```
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!)
}

/**
 * A 400 HTML page saying what is wrong with the authorization request.
 *
 * @example
 * ```ts
 * return errorPage('invalid_request', 'The redirect_uri is not registered for this client.')
 * ```
 */
export function errorPage(error: string, description: string, status = 400): Response {
  return page(
    'The application sent an invalid sign-in request',
    `<p>${escapeHtml(description)}</p>
<p>Error code: <code>${escapeHtml(error)}</code></p>
<p>Go back to the application and try again. If this keeps happening, tell its developers.</p>`,
    status,
  )
}

/**
 * A 500 HTML page: the server failed (its store, most likely). It says nothing of why.
 *
 * @example
 * ```ts
 * return serverErrorPage()
 * ```
 */
export function serverErrorPage(): Response {
  return page(
    'Sign-in is not available',
    `<p>The server could not handle the sign-in request.</p>
<p>Error code: <code>server_error</code></p>
<p>Try again in a moment.</p>`,
    500,
  )
}

/**
 * A 503 HTML page with `Retry-After` (RFC 9110 §10.2.3): too many sign-ins are in progress.
 *
 * @example
 * ```ts
 * return unavailablePage(30)
 * ```
 */
export function unavailablePage(retryAfterSeconds: number): Response {
  const response = page(
    'Sign-in is busy',
    `<p>Too many sign-ins are in progress.</p>
<p>Error code: <code>temporarily_unavailable</code></p>
<p>Try again in a moment.</p>`,
    503,
  )
  response.headers.set('retry-after', String(retryAfterSeconds))
  return response
}

function page(title: string, content: string, status: number): Response {
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorization error</title>
</head>
<body>
<main>
<h1>${title}</h1>
${content}
</main>
</body>
</html>
`
  return new Response(body, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
  })
}
