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
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorization error</title>
</head>
<body>
<main>
<h1>The application sent an invalid sign-in request</h1>
<p>${escapeHtml(description)}</p>
<p>Error code: <code>${escapeHtml(error)}</code></p>
<p>Go back to the application and try again. If this keeps happening, tell its developers.</p>
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
