// Responses from fetch(), Response.redirect() and Response.error() have immutable headers.
// Middleware that adds headers goes through withHeaders(), which copies such a response once.

/**
 * Applies `edit` to the response's headers; when they are immutable (a `fetch()` result, a
 * `Response.redirect()`), to a copy of the response with the same body stream, status and
 * headers. Returns the response that was edited: always use the return value.
 *
 * @example
 * ```ts
 * response = withHeaders(response, (headers) => headers.set('x-request-id', id))
 * ```
 */
export function withHeaders(response: Response, edit: (headers: Headers) => void): Response {
  try {
    edit(response.headers)
    return response
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
  }
  // A network error (Response.error(), status 0) cannot be rebuilt and carries no headers.
  if (response.type === 'error') return response
  const copy = new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
  edit(copy.headers)
  return copy
}
