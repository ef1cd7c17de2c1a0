// Where orders and operations live: the interface the routes use, and the in-memory
// implementation (the embedded default, one process). orders/postgres-store.ts is the one
// several instances share.
import type { IdempotencyStore } from '@api-blocks/idempotency'
import type { KeysetOrder, PageRequest } from '@api-blocks/pagination'
import { comparePositions, positionOf, seekArray } from '@api-blocks/pagination'
import type { Queryable } from '@api-blocks/postgres'
import { createIdGenerator } from './id.ts'
import type { CreateOrder, Operation, Order } from './schema.ts'

/** The list order: oldest first, ties broken by id (ids are unique, so the order is total). */
export const LIST_ORDER: KeysetOrder = { keys: ['created_at', 'id'], direction: 'asc' }

/** A page of the list: a forward keyset page in {@link LIST_ORDER}, and the status filter. */
export interface OrderListQuery {
  status: Order['status'] | null
  page: PageRequest
}

/** What a write of an order sets (the members it leaves out keep their value). */
export type OrderChanges = Partial<Pick<Order, 'customer' | 'items' | 'note' | 'status'>>

/**
 * Builds the answer to a write inside the write: the store commits the write only if this
 * resolves. `idempotencyStore` is the idempotency store bound to the write's transaction (a
 * store that has one: PostgreSQL), for `completeWith` of the idempotency context, so that the
 * write and the completed Idempotency-Key record commit together; `undefined` when the store
 * has none (memory), and then the middleware completes the record after the handler.
 */
export type Respond<T, R> = (value: T, idempotencyStore: IdempotencyStore | undefined) => Promise<R>

/** The events a write to an order emits, in the order of an order's life (docs/service.md, "Webhooks"). */
export const ORDER_EVENT_TYPES = [
  'order.created',
  'order.updated',
  'order.cancelled',
  'order.deleted',
] as const

/** One of {@link ORDER_EVENT_TYPES}. */
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number]

/**
 * Receives each change of an order, with the order as the API shows it after the change (as
 * it was for `order.deleted`). A store with transactions calls it inside the write's
 * transaction and passes that transaction's connection (`db`), so the event is enqueued in the
 * same commit as the write (the transactional outbox) and a write that rolls back emits
 * nothing; what it throws rolls the write back. The memory store calls it after its write
 * (`db` undefined).
 */
export type OrderEvents = (type: OrderEventType, order: Order, db?: Queryable) => Promise<void>

/** Orders and operations. Every method returns a Promise (a store may be a database). */
export interface OrderStore {
  /** Up to `page.limit + 1` orders after `page.after` in {@link LIST_ORDER} (the extra one tells that more follow). */
  list(query: OrderListQuery): Promise<Order[]>
  get(id: string): Promise<Order | undefined>
  /** Creates an order (id, times, version 1) and answers with `respond`, in one write. */
  create<R>(input: CreateOrder, respond: Respond<Order, R>): Promise<R>
  /**
   * Writes `changes` over `current` and bumps the version, if the order is still at
   * `current.version`; `undefined` when it changed or went since it was read (no write).
   */
  update(current: Order, changes: OrderChanges): Promise<Order | undefined>
  /** Deletes the order if it is still at `current.version`; whether it did. */
  delete(current: Order): Promise<boolean>
  /**
   * Moves an open order to `cancelling` and creates the operation that reports the
   * cancellation (its `target` the order's path), answering with `respond`, in one write;
   * `undefined` when the order is gone or no longer open (no write).
   */
  cancel<R>(id: string, target: string, respond: Respond<Operation, R>): Promise<R | undefined>
  /** Ends a cancellation: the order `cancelled` (from `cancelling`), the operation `succeeded`. */
  finishCancel(orderId: string, operationId: string): Promise<void>
  getOperation(id: string): Promise<Operation | undefined>
}

/** Options of {@link MemoryOrderStore}. */
export interface MemoryOrderStoreOptions {
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number
  /** Makes ids (default: time-ordered random ids of orders/id.ts). */
  nextId?: (prefix: string) => string
  /**
   * Receives every change, after the write (default: none). What it throws fails the call; a
   * create is undone then, other writes stay done.
   */
  events?: OrderEvents
}

/**
 * Orders in memory, kept sorted in {@link LIST_ORDER}: a page is a binary search and a walk of
 * at most `limit + 1` matching orders (plus the ones the status filter skips).
 */
export class MemoryOrderStore implements OrderStore {
  readonly #orders = new Map<string, Order>()
  /** The orders in LIST_ORDER. */
  readonly #sorted: Order[] = []
  readonly #operations = new Map<string, Operation>()
  readonly #clock: () => number
  readonly #nextId: (prefix: string) => string
  readonly #events: OrderEvents | undefined

  constructor(options: MemoryOrderStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now
    this.#nextId = options.nextId ?? createIdGenerator({ clock: this.#clock })
    this.#events = options.events
  }

  #now(): string {
    return new Date(this.#clock()).toISOString()
  }

  /** The index of the first order after `position` in LIST_ORDER. */
  #indexAfter(position: readonly (string | number | boolean)[]): number {
    let low = 0
    let high = this.#sorted.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const order = this.#sorted[middle] as Order
      if (comparePositions(positionOf(order, LIST_ORDER), position) <= 0) low = middle + 1
      else high = middle
    }
    return low
  }

  async list({ status, page }: OrderListQuery): Promise<Order[]> {
    if (page.direction !== 'forward' || page.before !== undefined) {
      // Not what the routes ask; the general (linear) seek answers it all the same.
      return seekArray(
        this.#sorted.filter((order) => status === null || order.status === status),
        page,
      )
    }
    const rows: Order[] = []
    const start = page.after === undefined ? 0 : this.#indexAfter(page.after)
    for (let index = start; index < this.#sorted.length && rows.length <= page.limit; index += 1) {
      const order = this.#sorted[index] as Order
      if (status === null || order.status === status) rows.push(order)
    }
    return rows
  }

  async get(id: string): Promise<Order | undefined> {
    return this.#orders.get(id)
  }

  async create<R>(input: CreateOrder, respond: Respond<Order, R>): Promise<R> {
    const now = this.#now()
    const order: Order = {
      id: this.#nextId('ord'),
      status: 'open',
      customer: input.customer,
      items: input.items,
      note: input.note ?? null,
      version: 1,
      created_at: now,
      updated_at: now,
    }
    this.#put(order)
    try {
      const answer = await respond(order, undefined)
      await this.#events?.('order.created', order)
      return answer
    } catch (error) {
      this.#remove(order.id) // the write fails with its answer
      throw error
    }
  }

  async update(current: Order, changes: OrderChanges): Promise<Order | undefined> {
    const next = this.#write(current, changes)
    if (next !== undefined) await this.#events?.('order.updated', next)
    return next
  }

  /** Writes `changes` over the order if it is still at `current.version`; no event. */
  #write(current: Order, changes: OrderChanges): Order | undefined {
    const stored = this.#orders.get(current.id)
    if (stored === undefined || stored.version !== current.version) return undefined
    const next: Order = {
      ...stored,
      ...changes,
      version: stored.version + 1,
      updated_at: this.#now(),
    }
    this.#orders.set(next.id, next)
    const index = this.#indexAfter(positionOf(next, LIST_ORDER)) - 1
    this.#sorted[index] = next
    return next
  }

  async delete(current: Order): Promise<boolean> {
    const stored = this.#orders.get(current.id)
    if (stored === undefined || stored.version !== current.version) return false
    this.#remove(current.id)
    await this.#events?.('order.deleted', stored)
    return true
  }

  async cancel<R>(
    id: string,
    target: string,
    respond: Respond<Operation, R>,
  ): Promise<R | undefined> {
    const order = this.#orders.get(id)
    if (order === undefined || order.status !== 'open') return undefined
    const operation: Operation = {
      id: this.#nextId('op'),
      kind: 'order.cancel',
      status: 'running',
      target,
      created_at: this.#now(),
      completed_at: null,
    }
    const answer = await respond(operation, undefined)
    // Written once the answer is built (nothing awaited in between the check and the write).
    if (this.#orders.get(id)?.status !== 'open') return undefined
    // No event yet: order.cancelled is emitted when the cancellation completes (finishCancel).
    this.#write(this.#orders.get(id) as Order, { status: 'cancelling' })
    this.#operations.set(operation.id, operation)
    return answer
  }

  async finishCancel(orderId: string, operationId: string): Promise<void> {
    const order = this.#orders.get(orderId)
    const cancelled =
      order?.status === 'cancelling' ? this.#write(order, { status: 'cancelled' }) : undefined
    const operation = this.#operations.get(operationId)
    if (operation !== undefined) {
      this.#operations.set(operationId, {
        ...operation,
        status: 'succeeded',
        completed_at: this.#now(),
      })
    }
    if (cancelled !== undefined) await this.#events?.('order.cancelled', cancelled)
  }

  async getOperation(id: string): Promise<Operation | undefined> {
    return this.#operations.get(id)
  }

  #put(order: Order): void {
    this.#orders.set(order.id, order)
    const position = positionOf(order, LIST_ORDER)
    const last = this.#sorted.at(-1)
    // A new order (time-ordered id, created now) sorts last: appended without a search
    // (bench: service, keyed POST, where the search over every order cost ~8 µs a create).
    if (last === undefined || comparePositions(positionOf(last, LIST_ORDER), position) < 0) {
      this.#sorted.push(order)
    } else this.#sorted.splice(this.#indexAfter(position), 0, order)
  }

  #remove(id: string): void {
    const order = this.#orders.get(id)
    if (order === undefined) return
    this.#orders.delete(id)
    this.#sorted.splice(this.#indexAfter(positionOf(order, LIST_ORDER)) - 1, 1)
  }
}
