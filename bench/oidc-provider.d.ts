// The little of oidc-provider 9 (which ships no types) that the oauth suite uses: a Koa
// application, so `callback()` is a node:http request listener.
declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http'

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    callback(): RequestListener
  }
}
