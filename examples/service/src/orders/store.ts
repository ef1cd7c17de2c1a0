// In-memory storage of orders and operations: the embedded default of the reference service.
import type { CreateOrder, Operation, Order, PatchOrder, ReplaceOrder } from './schema.ts'

export interface OrderStoreOptions {
  clock?: () => number
}

/** Orders kept in insertion order; ids sort in creation order, which keyset paging relies on. */
export class OrderStore {
  readonly #orders = new Map<string, Order>()
  readonly #operations = new Map<string, Operation>()
  readonly #clock: () => number
  #sequence = 0

  constructor(options: OrderStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now
  }

  #now(): string {
    return new Date(this.#clock()).toISOString()
  }

  #nextId(prefix: string): string {
    this.#sequence += 1
    return `${prefix}_${this.#sequence.toString().padStart(6, '0')}`
  }

  list(): Order[] {
    return [...this.#orders.values()]
  }

  get(id: string): Order | undefined {
    return this.#orders.get(id)
  }

  create(input: CreateOrder): Order {
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
    this.#orders.set(order.id, order)
    return order
  }

  replace(id: string, input: ReplaceOrder): Order | undefined {
    return this.#update(id, { customer: input.customer, items: input.items, note: input.note })
  }

  patch(id: string, input: PatchOrder): Order | undefined {
    const changes: Partial<Order> = {}
    if (input.customer !== undefined) changes.customer = input.customer
    if (input.items !== undefined) changes.items = input.items
    if (input.note !== undefined) changes.note = input.note
    return this.#update(id, changes)
  }

  setStatus(id: string, status: Order['status']): Order | undefined {
    return this.#update(id, { status })
  }

  #update(id: string, changes: Partial<Order>): Order | undefined {
    const current = this.#orders.get(id)
    if (current === undefined) return undefined
    const next: Order = {
      ...current,
      ...changes,
      version: current.version + 1,
      updated_at: this.#now(),
    }
    this.#orders.set(id, next)
    return next
  }

  delete(id: string): boolean {
    return this.#orders.delete(id)
  }

  createOperation(target: string): Operation {
    const operation: Operation = {
      id: this.#nextId('op'),
      kind: 'order.cancel',
      status: 'running',
      target,
      created_at: this.#now(),
      completed_at: null,
    }
    this.#operations.set(operation.id, operation)
    return operation
  }

  completeOperation(id: string, status: 'succeeded' | 'failed'): void {
    const operation = this.#operations.get(id)
    if (operation !== undefined) {
      this.#operations.set(id, { ...operation, status, completed_at: this.#now() })
    }
  }

  getOperation(id: string): Operation | undefined {
    return this.#operations.get(id)
  }
}
