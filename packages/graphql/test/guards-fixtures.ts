// A schema and helpers shared by the guard tests.
import {
  buildSchema,
  type DocumentNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
} from 'graphql'
import { costDirectivesSDL, parseDocument } from '../src/index.ts'

export const schema: GraphQLSchema = buildSchema(`${costDirectivesSDL}
type Query {
  orders(first: Int = 20, last: Int, after: String): OrderConnection!
  order(id: ID!): Order
  items(first: Int): [Item!]! @listSize(slicingArguments: ["first"])
  tags: [String!]!
  recent: [Order!]! @listSize(assumedSize: 5)
  search(limit: Int): [SearchResult!]! @listSize(slicingArguments: ["limit"], requireOneSlicingArgument: false)
  node(id: ID): Node
  heavy: Heavy
  answer: Int
}
type Mutation { createOrder(total: Int!): Order! }
interface Node { id: ID! }
union SearchResult = Order | Item
type OrderConnection { edges: [OrderEdge!]! nodes: [Order!]! pageInfo: PageInfo! totalCount: Int! }
type OrderEdge { cursor: String! node: Order! }
type PageInfo { hasNextPage: Boolean! endCursor: String }
type Order implements Node { id: ID! total: Int! @cost(weight: "2") items(first: Int): [Item!]! @listSize(slicingArguments: ["first"]) lines: [Item!]! customer: Customer! }
type Item implements Node { id: ID! sku: String! price: Int! @cost(weight: "3.5") }
type Customer { name: String! }
type Heavy @cost(weight: "7") { name: String! }
`)

/** Parses (failing the test on a syntax error) and returns the document and its first operation. */
export function operationOf(source: string): {
  document: DocumentNode
  operation: OperationDefinitionNode
} {
  const document = parseDocument(source, { maxTokens: 1_000_000 })
  if (document instanceof GraphQLError) throw document
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)
  if (operation === undefined) throw new Error('no operation')
  return { document, operation }
}
