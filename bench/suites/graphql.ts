// Issue 16: the guard pass of @api-blocks/graphql against graphql-js `validate` with the
// specified rules (target: the guards cost at most 0.30 of it) and against the peer stack a team
// assembles today (target: at least 3x faster): graphql-query-complexity 2.0.0
// (`createComplexityRule` with `fieldExtensionsEstimator` then `simpleEstimator`, the request's
// variables given), graphql-depth-limit 1.1.0, and graphql-armor's max-aliases 2.6.2 and
// max-directives 2.3.1 rules, run as validation rules in one `validate(schema, document, rules)`
// call (no specified rules); and one bare `visit(document, {})`, the floor of any walk.
//
// Each gets the parsed document (parsing is the same for all and not timed) and does what it
// does per request in use. ours: `analyzeDocument(schema, document, options)`, then
// `.operation(operation)`, then, when that passes, graphql-js `getVariableValues` and
// `.cost(operation, variableValues)`; "ours, cached" is what the endpoint does per request once
// the document is cached: the coercion and `.cost` alone. The peers: a complexity rule built per
// request (it needs the variables) and the three other rules, in one validation. The limits
// are the same for both sides where both have them (depth 20, aliases 100, directives 50, nodes
// 10,000, cost 50,000), so the ordinary documents pass everywhere and the hostile ones are
// refused (checked before timing; what throws out of `validate` is reported as such).
//
// In this process, pinned to CPU 1 where `taskset` exists: ROUNDS rounds per document, in each
// one batch per implementation (the order rotating), each batch timed by this process's CPU time
// (so what else the machine runs weighs on none); the tables show the median CPU time per call
// and the medians of the per-round ratios (interquartile range). A batch lasts about 2 ms.
import {
  analyzeDocument,
  costDirectivesSDL,
  type DocumentAnalysis,
  type GuardOptions,
} from '@api-blocks/graphql'
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases'
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives'
import {
  buildSchema,
  type DocumentNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  getVariableValues,
  type OperationDefinitionNode,
  parse,
  specifiedRules,
  type ValidationRule,
  validate,
  visit,
} from 'graphql'
import depthLimit from 'graphql-depth-limit'
import {
  createComplexityRule,
  fieldExtensionsEstimator,
  simpleEstimator,
} from 'graphql-query-complexity'
import { median, pinClient } from '../service-process.ts'

const ROUNDS = Number(process.env['GRAPHQL_BENCH_ROUNDS'] ?? 60)
const BATCH_MS = 2
/** Most CPU time one document's rounds may take; fewer rounds (at least 9) when it would be more. */
const DOCUMENT_BUDGET_MS = Number(process.env['GRAPHQL_BENCH_BUDGET_MS'] ?? 6000)

const LIMITS = { depth: 20, aliases: 100, directives: 50, nodes: 10_000, cost: 50_000 }
const OURS: GuardOptions = {
  maxDepth: LIMITS.depth,
  maxAliases: LIMITS.aliases,
  maxDirectives: LIMITS.directives,
  maxNodes: LIMITS.nodes,
  maxCost: LIMITS.cost,
}

const wideFields = Array.from({ length: 100 }, (_, i) => `f${i}: Int`).join(' ')
const SDL = `
${costDirectivesSDL}
interface Node { id: ID! }
union SearchResult = Order | User | Product
type Query {
  node(id: ID!): Node
  order(id: ID!): Order
  orders(first: Int = 20, after: String, last: Int, before: String): OrderConnection!
  search(text: String!, first: Int = 10): [SearchResult!]! @listSize(slicingArguments: ["first"])
  viewer: User
  wide: Wide
}
type OrderConnection { edges: [OrderEdge!]! nodes: [Order!]! pageInfo: PageInfo! totalCount: Int! }
type OrderEdge { cursor: String! node: Order! }
type PageInfo { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }
enum OrderStatus { PENDING PAID SHIPPED CANCELLED }
type Order implements Node {
  id: ID! status: OrderStatus! total: Int! currency: String! createdAt: String! note: String
  customer: User! items: [LineItem!]! @listSize(assumedSize: 5) shipping: Address
}
type LineItem { sku: String! quantity: Int! price: Int! product: Product! }
type Product implements Node {
  id: ID! sku: String! name: String! price: Int! @cost(weight: "2")
  related(first: Int = 5): [Product!]! @listSize(slicingArguments: ["first"])
}
type User implements Node {
  id: ID! name: String! email: String! addresses: [Address!]! @listSize(assumedSize: 3)
  orders(first: Int = 10, after: String): OrderConnection!
}
type Address { line1: String! city: String! country: String! postalCode: String }
type Wide { ${wideFields} a: Wide b: Wide c: Wide d: Wide }
`

// The peer's cost model, as a team would write it for graphql-query-complexity: field
// extensions that multiply the lists by their page size (the same sizes as the directives
// give ours), `simpleEstimator` (1 per field) for the rest.
function peerSchema(schema: GraphQLSchema): GraphQLSchema {
  const sized = (type: string, field: string, size: (args: Record<string, unknown>) => number) => {
    const definition = (schema.getType(type) as GraphQLObjectType).getFields()[
      field
    ] as GraphQLField<unknown, unknown>
    ;(definition as { extensions: object }).extensions = {
      complexity: (options: { args: Record<string, unknown>; childComplexity: number }) =>
        1 + size(options.args) * options.childComplexity,
    }
  }
  const page = (args: Record<string, unknown>) =>
    Math.max(Number(args['first'] ?? 0), Number(args['last'] ?? 0))
  sized('Query', 'orders', page)
  sized('User', 'orders', page)
  sized('Query', 'search', page)
  sized('Product', 'related', page)
  sized('Order', 'items', () => 5)
  sized('User', 'addresses', () => 3)
  return schema
}

const range = (count: number) => Array.from({ length: count }, (_, i) => i)
const wideLeaves = range(100)
  .map((i) => `f${i}`)
  .join(' ')

interface Case {
  name: string
  source: string
  variables: Record<string, unknown>
  /** Whether the guards must refuse it (checked on both sides before timing). */
  hostile: boolean
}

const typical: Case = {
  name: 'typical (24 fields, a fragment, variables)',
  hostile: false,
  variables: { first: 20, after: null, withItems: true },
  source: `query Orders($first: Int!, $after: String, $withItems: Boolean!) {
  viewer { id name email }
  orders(first: $first, after: $after) {
    edges {
      cursor
      node { ...OrderSummary items @include(if: $withItems) { sku quantity price } }
    }
    pageInfo { hasNextPage endCursor }
  }
}
fragment OrderSummary on Order { id status total currency createdAt customer { id name email } }`,
}

const fiveHundred: Case = {
  name: '505 fields',
  hostile: false,
  variables: {},
  source: `{ wide { ${wideLeaves} ${['a', 'b', 'c', 'd'].map((f) => `${f} { ${wideLeaves} }`).join(' ')} } }`,
}

const fragmentHeavy: Case = {
  name: 'fragment-heavy (11 fragments, 26 spreads)',
  hostile: false,
  variables: { first: 10 },
  source: `query Dashboard($first: Int!) {
  viewer { ...UserCard orders(first: $first) { ...OrderPage } }
  orders(first: $first) { ...OrderPage }
  recent: orders(first: 5) { ...OrderPage }
  order(id: "1") { ...OrderDetail }
  search(text: "x", first: $first) { ...SearchHit }
  node(id: "2") { ...NodeBits }
}
fragment OrderPage on OrderConnection { edges { cursor node { ...OrderDetail } } nodes { ...OrderRow } pageInfo { ...Paging } totalCount }
fragment Paging on PageInfo { hasNextPage hasPreviousPage startCursor endCursor }
fragment OrderRow on Order { id status total currency createdAt }
fragment OrderDetail on Order { ...OrderRow note customer { ...UserCard } items { ...ItemRow } shipping { ...AddressBits } }
fragment ItemRow on LineItem { sku quantity price product { ...ProductCard } }
fragment ProductCard on Product { id sku name price related(first: 3) { ...ProductBrief } }
fragment ProductBrief on Product { id sku name }
fragment UserCard on User { id name email addresses { ...AddressBits } }
fragment AddressBits on Address { line1 city country postalCode }
fragment SearchHit on SearchResult { __typename ... on Order { ...OrderRow } ... on User { ...UserCard } ... on Product { ...ProductCard } }
fragment NodeBits on Node { id ... on Order { ...OrderDetail } ... on User { ...UserCard } ... on Product { ...ProductCard } }`,
}

const aliases = (count: number): Case => ({
  name: `${count.toLocaleString('en')} aliases`,
  hostile: count > LIMITS.aliases,
  variables: {},
  source:
    count <= LIMITS.aliases
      ? `{ ${range(count)
          .map((i) => `o${i}: order(id: "${i}") { id status total }`)
          .join(' ')} }`
      : `{ wide { ${range(count)
          .map((i) => `a${i}: f${i % 100}`)
          .join(' ')} } }`,
})

// Fragment doubling: D_k spreads D_(k-1) twice, so `levels` fragments expand to 2^(levels+1)
// leaf fields (fields merge, so graphql-js accepts it).
const doubling = (levels: number): Case => ({
  name: `fragment doubling, ${levels} levels (${levels < 30 ? (2 ** (levels + 1)).toLocaleString('en') : `2^${levels + 1}`} fields)`,
  hostile: true,
  variables: {},
  source: [
    `{ wide { ...D${levels} } }`,
    'fragment D0 on Wide { f0 f1 }',
    ...range(levels).map((i) => `fragment D${i + 1} on Wide { ...D${i} ...D${i} }`),
  ].join('\n'),
})

const depth = (levels: number): Case => ({
  name: `depth ${levels.toLocaleString('en')}`,
  hostile: true,
  variables: {},
  source: `{ wide { ${'a { '.repeat(levels - 2)}f0${' }'.repeat(levels - 2)} } }`,
})

const ofType = (levels: number): Case => ({
  name: `${levels.toLocaleString('en')}-deep ofType chain`,
  hostile: true,
  variables: {},
  source: `{ __type(name: "Order") { ${'ofType { '.repeat(levels - 2)}name${' }'.repeat(levels - 2)} } }`,
})

// The same field repeated in one selection set: graphql-js's OverlappingFieldsCanBeMerged
// compares the repeats pairwise (quadratic); the guards refuse past maxFieldRepeats (30).
const repeats = (count: number): Case => ({
  name: `${count.toLocaleString('en')} repeats of one field`,
  hostile: true,
  variables: {},
  source: `{ ${'order(id: "1") { id } '.repeat(count)}}`,
})

const cycle: Case = {
  name: 'fragment cycle',
  hostile: true,
  variables: {},
  source: '{ wide { ...A } }\nfragment A on Wide { f0 ...B }\nfragment B on Wide { f1 ...A }',
}

type Name = 'validate' | 'ours' | 'cached' | 'peer' | 'visit'
const NAMES: readonly Name[] = ['validate', 'ours', 'cached', 'peer', 'visit']
const LABELS: Record<Name, string> = {
  validate: 'graphql-js validate(specifiedRules)',
  ours: 'ours: analyzeDocument + operation + cost',
  cached: 'ours, document cached: cost only',
  peer: 'peers: gqc + depth-limit + armor aliases, directives',
  visit: 'one bare visit(document, {})',
}

interface Prepared {
  tasks: Record<Name, () => void>
  /** What each side said about the document: 'ok', the codes / messages of its errors, or 'throws …'. */
  verdicts: Record<'validate' | 'ours' | 'peer', string>
}

let sink = 0

function prepare(
  schema: GraphQLSchema,
  peers: GraphQLSchema,
  test: Case,
  runPeers = true,
): Prepared {
  const document: DocumentNode = parse(test.source)
  const operation = document.definitions.find(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === 'OperationDefinition',
  ) as OperationDefinitionNode
  const coerce = () => {
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], test.variables)
    if (coerced.errors) throw new Error(`${test.name}: variables ${coerced.errors[0]?.message}`)
    return coerced.coerced
  }

  // The endpoint validates between the static measures and the cost, and costs only a valid
  // document (validate is timed on its own): a document validate refuses stops there.
  const valid = validate(schema, document, specifiedRules).length === 0
  const ours = () => {
    const analysis = analyzeDocument(schema, document, OURS)
    const report = analysis.operation(operation)
    if (report.errors.length > 0 || !valid) return report.errors
    return analysis.cost(operation, coerce()).errors
  }
  const cachedAnalysis: DocumentAnalysis = analyzeDocument(schema, document, OURS)
  const cached = () => cachedAnalysis.cost(operation, coerce()).errors

  const peerRules = (): ValidationRule[] => [
    createComplexityRule({
      maximumComplexity: LIMITS.cost,
      variables: test.variables,
      estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
    }),
    depthLimit(LIMITS.depth),
    maxAliasesRule({ n: LIMITS.aliases }),
    maxDirectivesRule({ n: LIMITS.directives }),
  ]
  const peer = () => {
    try {
      return validate(peers, document, peerRules())
    } catch (error) {
      return error
    }
  }

  const describe = (result: unknown): string => {
    if (result instanceof Error) return `throws ${result.name}: ${result.message.slice(0, 60)}`
    const errors = result as readonly { message: string; extensions?: { code?: unknown } }[]
    if (errors.length === 0) return 'ok'
    return errors
      .map((error) => String(error.extensions?.code ?? error.message.slice(0, 60)))
      .join('; ')
  }
  const verdicts = {
    validate: describe(validate(schema, document, specifiedRules)),
    ours: describe(ours()),
    peer: runPeers ? describe(peer()) : 'not run',
  }
  return {
    verdicts,
    tasks: {
      validate: () => {
        sink += validate(schema, document, specifiedRules).length
      },
      ours: () => {
        sink += ours().length
      },
      // A document refused statically is never cached for costing: cost only what passed.
      cached: () => {
        if (!test.hostile) sink += cached().length
      },
      peer: () => {
        const result = peer()
        sink += Array.isArray(result) ? result.length : 1
      },
      visit: () => {
        visit(document, {})
        sink += 1
      },
    },
  }
}

// This process's CPU time, µs (user + system).
const cpu = () => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

function time(task: () => void, batch: number): number {
  const before = cpu()
  for (let index = 0; index < batch; index += 1) task()
  return (cpu() - before) / batch
}

const quartiles = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => format(sorted[Math.floor(q * (sorted.length - 1))] as number)
  return `${at(0.25)}–${at(0.75)}`
}
const format = (value: number) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)
const formatTime = (micros: number) =>
  micros >= 10_000 ? `${(micros / 1000).toFixed(1)} ms` : `${format(micros)} µs`

interface Measured {
  times: Record<Name, number>
  oursToValidate: number[]
  peerToOurs: number[]
  peerToValidate: number[]
  oursToVisit: number[]
  rounds: number
}

function measure(prepared: Prepared, names: readonly Name[] = NAMES): Measured {
  const { tasks } = prepared
  // Calibrate: a batch of about BATCH_MS each (after a warm-up that lets V8 optimise).
  const batchOf = {} as Record<Name, number>
  let perRound = 0
  for (const name of names) {
    for (let index = 0; index < 3; index += 1) time(tasks[name], 1)
    let batch = 1
    let spent = time(tasks[name], batch)
    while (spent * batch < BATCH_MS * 1000 && batch < 1_000_000) {
      batch *= 2
      spent = time(tasks[name], batch)
    }
    batchOf[name] = batch
    const settled: number[] = []
    for (let index = 0; index < 5; index += 1) settled.push(time(tasks[name], batch))
    perRound += median(settled) * batch
  }
  const rounds = Math.max(9, Math.min(ROUNDS, Math.floor((DOCUMENT_BUDGET_MS * 1000) / perRound)))
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
    Name,
    number[]
  >
  const result: Measured = {
    times: {} as Record<Name, number>,
    oursToValidate: [],
    peerToOurs: [],
    peerToValidate: [],
    oursToVisit: [],
    rounds,
  }
  for (let round = 0; round < rounds; round += 1) {
    const times = {} as Record<Name, number>
    for (let step = 0; step < names.length; step += 1) {
      const name = names[(round + step) % names.length] as Name
      times[name] = time(tasks[name], batchOf[name])
    }
    for (const name of names) samples[name].push(times[name])
    result.oursToValidate.push(times.ours / times.validate)
    result.peerToOurs.push(times.peer / times.ours)
    result.peerToValidate.push(times.peer / times.validate)
    result.oursToVisit.push(times.ours / times.visit)
  }
  for (const name of names) result.times[name] = median(samples[name])
  return result
}

export default async function run(): Promise<void> {
  pinClient()
  // graphql-depth-limit console.error()s what it throws (a RangeError on a fragment cycle),
  // every time: silenced for this suite.
  const error = console.error
  console.error = () => {}
  try {
    report()
  } finally {
    console.error = error
  }
}

function report(): void {
  const schema = buildSchema(SDL)
  const peers = peerSchema(buildSchema(SDL))

  const cases = [
    typical,
    fiveHundred,
    fragmentHeavy,
    aliases(100),
    doubling(20),
    aliases(10_000),
    depth(1000),
    ofType(1000),
    cycle,
    repeats(1200),
  ]
  console.log(
    `\nLimits on both sides: depth ${LIMITS.depth}, aliases ${LIMITS.aliases}, directives ${LIMITS.directives}, nodes ${LIMITS.nodes}, cost ${LIMITS.cost}.`,
  )
  console.log('\nWhat each says (before timing)')
  console.log('| document | validate | ours | peers |')
  console.log('|---|---|---|---|')
  const prepared = cases.map((test) => {
    const result = prepare(schema, peers, test)
    const { verdicts } = result
    console.log(`| ${test.name} | ${verdicts.validate} | ${verdicts.ours} | ${verdicts.peer} |`)
    const refused = verdicts.ours !== 'ok' || verdicts.validate !== 'ok'
    if (refused !== test.hostile) throw new Error(`${test.name}: ours says ${verdicts.ours}`)
    return result
  })

  console.log(
    '\nCPU time per call (medians of the rounds); ratios: medians of the per-round ratios (IQR)',
  )
  console.log(
    `| document | rounds | ${NAMES.map((name) => LABELS[name]).join(' | ')} | ours / validate | peers / ours | peers / validate | ours / visit |`,
  )
  console.log(`|---|---:|${NAMES.map(() => '---:').join('|')}|---:|---:|---:|---:|`)
  for (const [index, test] of cases.entries()) {
    const measured = measure(prepared[index] as Prepared)
    const { times } = measured
    const hit = (ok: boolean) => (ok ? '✅' : '❌')
    const oursToValidate = median(measured.oursToValidate)
    const peerToOurs = median(measured.peerToOurs)
    console.log(
      `| ${test.name} | ${measured.rounds} | ${NAMES.map((name) => (name === 'cached' && test.hostile ? '—' : formatTime(times[name]))).join(' | ')} | ${hit(oursToValidate <= 0.3)} ${oursToValidate.toFixed(3)} (${quartiles(measured.oursToValidate)}) | ${hit(peerToOurs >= 3)} ${format(peerToOurs)}× (${quartiles(measured.peerToOurs)}) | ${median(measured.peerToValidate).toFixed(3)} | ${format(median(measured.oursToVisit))}× |`,
    )
  }

  // Rejection time against document size: ours should grow linearly (µs per unit flat).
  console.log('\nRejection time against document size (ours; validate and the peers beside it)')
  console.log('| document | ours | ours per unit | bare visit | validate | peers | peers say |')
  console.log('|---|---:|---:|---:|---:|---:|---|')
  const scaling: [Case, number, string][] = [
    ...[1000, 2000, 4000, 8000].map((n): [Case, number, string] => [aliases(n), n, 'alias']),
    ...[250, 500, 1000, 2000].map((n): [Case, number, string] => [depth(n), n, 'level']),
    ...[250, 500, 1000, 2000].map((n): [Case, number, string] => [ofType(n), n, 'level']),
    ...[14, 17, 20, 40, 80].map((n): [Case, number, string] => [doubling(n), n, 'fragment']),
    ...[150, 300, 600, 1200].map((n): [Case, number, string] => [repeats(n), n, 'repeat']),
  ]
  for (const [test, units, unit] of scaling) {
    // graphql-depth-limit walks every spread of a doubling document (2^levels): past 20 levels
    // it would run for minutes, so the peers are not run there.
    const runPeers = !(unit === 'fragment' && units > 20)
    const result = prepare(schema, peers, test, runPeers)
    if (result.verdicts.ours === 'ok' && result.verdicts.validate === 'ok') {
      throw new Error(`${test.name}: ours accepts it`)
    }
    const measured = measure(
      result,
      runPeers ? ['validate', 'ours', 'peer', 'visit'] : ['validate', 'ours', 'visit'],
    )
    const { times } = measured
    console.log(
      `| ${test.name} | ${formatTime(times.ours)} | ${format((times.ours * 1000) / units)} ns/${unit} | ${formatTime(times.visit)} | ${formatTime(times.validate)} | ${runPeers ? formatTime(times.peer) : '—'} | ${result.verdicts.peer.slice(0, 50)} |`,
    )
  }
  console.log('(targets: ours / validate <= 0.30, peers / ours >= 3)')
  if (sink === -1) console.log(sink)
}
