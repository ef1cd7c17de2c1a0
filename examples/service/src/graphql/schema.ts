// The GraphQL schema of the service: the orders of /v1/orders, the same rows, validation and
// cursors, as types (docs/service.md, "GraphQL"). Scopes are field directives (@requiresScopes,
// checked from the bearer principal: a refused field is null with FORBIDDEN at its path) and
// costs are the IBM cost directives (@cost, @listSize), read by the guard pass before execution.
//
// The cost unit is the REST request: what one call to the order store costs. A page of orders
// is one indexed range read whatever its size (as GET /v1/orders?limit=100 is one request), an
// order by id one read, a create one write; what comes with the row (its items, the edges and
// page info of a page) costs nothing more. An operation that asks for three pages costs 3, and
// is charged 3 to the caller's rate limit, where REST would have charged three requests.

/** The schema's own types (the directive definitions come from @api-blocks/graphql). */
export const ORDER_TYPE_DEFS = /* GraphQL */ `
"""
An order of the shop's back office: the resource of /v1/orders, read from the same store.
Free of charge once its page or its read is paid for.
"""
type Order @cost(weight: "0") {
  "Opaque and unique across instances (ord_ and 26 characters)."
  id: ID!
  status: OrderStatus!
  customer: String!
  "1 to 100 lines."
  items: [LineItem!]! @listSize(assumedSize: 100)
  note: String
  "Goes up by one with every write (the ETag of /v1/orders/{id})."
  version: Int!
  "RFC 3339 date-time, UTC, to the millisecond."
  createdAt: String!
  "RFC 3339 date-time, UTC, to the millisecond."
  updatedAt: String!
}

enum OrderStatus {
  OPEN
  CANCELLING
  CANCELLED
}

type LineItem @cost(weight: "0") {
  sku: String!
  quantity: Int!
}

"A page of orders (Relay cursor connection); the cursors are those of GET /v1/orders."
type OrderConnection @cost(weight: "0") {
  edges: [OrderEdge!]!
  pageInfo: PageInfo!
}

type OrderEdge @cost(weight: "0") {
  cursor: String!
  node: Order!
}

type PageInfo @cost(weight: "0") {
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: String
  endCursor: String
}

"Who the bearer token speaks for."
type Viewer @cost(weight: "0") {
  "The user, or null for a client acting for itself (client credentials)."
  subject: String
  clientId: String
  scopes: [String!]! @listSize(assumedSize: 16)
}

type Query {
  "The caller: any valid token may ask."
  viewer: Viewer!
  "Oldest first; the same page sizes (1 to 100, default 20) and cursors as GET /v1/orders."
  orders(first: Int = 20, after: String, status: OrderStatus): OrderConnection!
    @requiresScopes(scopes: ["read:orders"])
    @cost(weight: "1")
    @listSize(slicingArguments: ["first"], sizedFields: ["edges"])
  "null when there is no order with this id."
  order(id: ID!): Order @requiresScopes(scopes: ["read:orders"]) @cost(weight: "1")
}

input LineItemInput {
  "1 to 64 of A-Z a-z 0-9 . _ -"
  sku: String!
  "1 to 10000"
  quantity: Int!
}

"The body of POST /v1/orders, validated by the same rules."
input CreateOrderInput {
  "1 to 200 characters, one line."
  customer: String!
  "1 to 100 lines."
  items: [LineItemInput!]!
  "Up to 2000 characters."
  note: String
}

type Mutation {
  """
  Creates an order as POST /v1/orders does: the same validation (BAD_USER_INPUT with JSON
  Pointers into the input), the same store, the order.created webhook. An Idempotency-Key
  header on the request replays the first answer.
  """
  createOrder(input: CreateOrderInput!): Order!
    @requiresScopes(scopes: ["write:orders"])
    @cost(weight: "1")
}

type Subscription {
  """
  Every change of an order (of any order, or of the order \`id\`), from either interface (REST or
  GraphQL), once its write has committed: created, updated, cancelling, cancelled, deleted (the
  order as it was last).
  """
  orderChanged(id: ID): Order! @requiresScopes(scopes: ["read:orders"]) @cost(weight: "1")
}
`
