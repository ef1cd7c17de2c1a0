import type { Handler, Middleware } from '@api-blocks/core'
import { contextKey, getContext, setContext } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import { compose } from './compose.ts'

const tag =
  (name: string, log: string[]): Middleware =>
  async (request, next) => {
    log.push(`>${name}`)
    const response = await next(request)
    log.push(`<${name}`)
    response.headers.append('x-order', name)
    return response
  }

describe('compose', () => {
  test('the first middleware is the outermost layer', async () => {
    const log: string[] = []
    const handler: Handler = async () => {
      log.push('handler')
      return new Response('ok')
    }
    const app = compose(tag('a', log), tag('b', log))(handler)
    const response = await app(new Request('https://api.example/'))
    expect(log).toEqual(['>a', '>b', 'handler', '<b', '<a'])
    expect(response.headers.get('x-order')).toBe('b, a')
  })

  test('with no middleware the handler itself answers', async () => {
    const app = compose()(async () => new Response('plain'))
    expect(await (await app(new Request('https://api.example/'))).text()).toBe('plain')
  })

  test('middleware can answer without calling next', async () => {
    const stop: Middleware = async () => new Response(null, { status: 418 })
    let called = false
    const app = compose(stop)(async () => {
      called = true
      return new Response()
    })
    expect((await app(new Request('https://api.example/'))).status).toBe(418)
    expect(called).toBe(false)
  })

  test('the same Request object reaches the handler', async () => {
    const request = new Request('https://api.example/')
    let seen: Request | undefined
    const app = compose(
      async (r, next) => next(r),
      async (r, next) => next(r),
    )(async (r) => {
      seen = r
      return new Response()
    })
    await app(request)
    expect(seen).toBe(request)
  })

  test('a middleware that hands on another Request keeps the per-request context', async () => {
    const key = contextKey<string>('test')
    const rebody: Middleware = async (request, next) =>
      next(new Request(request, { body: await request.text() }))
    let seen: string | undefined
    const app = compose(async (request, next) => {
      setContext(request, key, 'kept')
      return next(request)
    }, rebody)(async (request) => {
      seen = getContext(request, key)
      return new Response(await request.text())
    })
    const response = await app(
      new Request('https://api.example/', { method: 'POST', body: 'hello' }),
    )
    expect(seen).toBe('kept')
    expect(await response.text()).toBe('hello')
  })

  test('non-functions are refused when composing', () => {
    expect(() => compose(42 as never)).toThrow(TypeError)
    expect(() => compose()(undefined as never)).toThrow(TypeError)
  })
})
