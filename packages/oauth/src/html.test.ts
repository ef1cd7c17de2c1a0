import { describe, expect, test } from 'vitest'
import { errorPage, escapeHtml } from './html.ts'

describe('the error page', () => {
  test('escapeHtml escapes the five characters that matter', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    )
  })

  test('is accessible HTML, unframeable, never cached, and escapes what it shows', async () => {
    const response = errorPage('invalid_request', 'The <b>redirect_uri</b> is "wrong".')
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; frame-ancestors 'none'",
    )
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    const html = await response.text()
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/)
    expect(html).toContain('<title>Authorization error</title>')
    expect(html).toContain('<main>')
    expect(html).toContain('The &lt;b&gt;redirect_uri&lt;/b&gt; is &quot;wrong&quot;.')
    expect(html).not.toContain('<b>')
  })
})
