// The HTML of the login and consent pages: one small layout, every value escaped, and the
// headers that keep the pages out of frames and caches (RFC 9700 §4.12 for the 303s).
import { createHash } from 'node:crypto'

/** Escapes text for an HTML text node or a double-quoted attribute value. */
export function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
}

/** Text with `${…}` values escaped: `html\`<p>${name}</p>\``. {@link Raw} values pass as they are. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0] ?? ''
  for (const [index, value] of values.entries()) {
    out += render(value) + (strings[index + 1] ?? '')
  }
  return new Raw(out)
}

/** Markup that is already safe (built by {@link html}). */
export class Raw {
  readonly text: string

  constructor(text: string) {
    this.text = text
  }
}

function render(value: unknown): string {
  if (value instanceof Raw) return value.text
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === undefined || value === null || value === false) return ''
  return escapeHtml(String(value))
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
label{display:block;margin:.75rem 0 .25rem}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
button{margin:1rem .5rem 0 0;padding:.4rem 1rem}.error{color:#a00}fieldset{border:1px solid #ccc}
fieldset label{display:inline;margin:0}li{list-style:none;margin:.25rem 0}ul{padding:0}`
// The one inline style, allowed by its hash (CSP Level 2 §4.2.4), so no 'unsafe-inline'.
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64')

/**
 * The security headers of every page. CSP: nothing loads (no script at all), the one style by
 * its hash, forms post only to this origin and to `formTargets` (browsers apply form-action to
 * the redirect after the post too: the consent's 303 goes to the client), and no one frames
 * the page (clickjacking on a consent button, RFC 9700 §4.16).
 */
function pageHeaders(formTargets: readonly string[] = []): Record<string, string> {
  const targets = ["'self'", ...formTargets].join(' ')
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action ${targets}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` on the
    // form's POST (Fetch §3.2 "serializing a request origin"), so the same-origin check could
    // not tell the login form from a forged one. No referrer leaves for other sites either way.
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
  }
}

/** A whole page. */
export function page(
  title: string,
  body: Raw,
  init: { status?: number; headers?: Record<string, string>; formTargets?: readonly string[] } = {},
): Response {
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${new Raw(STYLE)}</style>
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`
  const headers = new Headers(pageHeaders(init.formTargets))
  for (const [name, value] of Object.entries(init.headers ?? {})) headers.append(name, value)
  return new Response(document.text, { status: init.status ?? 200, headers })
}

/** 303 See Other after a POST (RFC 9700 §4.12: a 307 would repost the password). */
export function seeOther(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, {
    status: 303,
    headers: { location, 'cache-control': 'no-store', ...headers },
  })
}
