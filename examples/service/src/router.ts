// A small router: path patterns with `:name` segments, each bound to the handlers of one
// resource. Method dispatch (HEAD from GET, OPTIONS, 405 with Allow) is the http block's
// `methods()`; this file only finds the resource and records its path parameters, where every
// block reads them: core's `setRouteParams` / `routeParamsOf`.
import { routeParamsOf, setRouteParams } from '@api-blocks/core'
import type { Handler, MethodHandlers } from '@api-blocks/http'
import { methods, problemResponse } from '@api-blocks/http'
import { problems } from '@api-blocks/problem-details'

/** The path parameters of the route that matched `request`. */
export function paramOf(request: Request, name: string): string {
  const value = routeParamsOf(request)?.[name]
  if (value === undefined) throw new Error(`No route parameter "${name}"`)
  return value
}

// Path parameters are opaque identifiers here: anything else is simply not a resource.
const PARAM = /^[A-Za-z0-9_-]{1,64}$/

/** Builds one Handler from `pattern → handlers`; an unknown path answers the 404 problem. */
export function router(routes: Readonly<Record<string, MethodHandlers>>): Handler {
  const compiled = Object.entries(routes).map(([pattern, handlers]) => ({
    segments: pattern.split('/'),
    handler: methods(handlers),
  }))
  return async (request) => {
    const path = new URL(request.url).pathname.split('/')
    for (const { segments, handler } of compiled) {
      if (segments.length !== path.length) continue
      const params: Record<string, string> = {}
      let matched = true
      for (let index = 0; index < segments.length && matched; index += 1) {
        const expected = segments[index] ?? ''
        const actual = path[index] ?? ''
        if (expected.startsWith(':')) {
          if (PARAM.test(actual)) params[expected.slice(1)] = actual
          else matched = false
        } else if (expected !== actual) {
          matched = false
        }
      }
      if (!matched) continue
      setRouteParams(request, params)
      return handler(request)
    }
    return problemResponse(
      problems.notFound.create({ detail: 'No resource at this path.' }),
      request,
    )
  }
}
