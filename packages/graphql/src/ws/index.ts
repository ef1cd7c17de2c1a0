/**
 * GraphQL subscriptions over WebSocket (the `graphql-transport-ws` protocol of graphql-ws) on a
 * Node HTTP server, with the same guards and authentication as the HTTP endpoint.
 *
 * @module
 */
export type { BearerAuthenticationOptions } from './bearer.ts'
export { bearerAuthentication } from './bearer.ts'
export type {
  GraphQLWebSocketEvent,
  GraphQLWebSocketOptions,
  GraphQLWebSocketServer,
  WebSocketConnection,
} from './options.ts'
export { attachGraphQLWebSocket } from './server.ts'
