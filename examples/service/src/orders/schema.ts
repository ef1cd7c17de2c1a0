// The order resource of the reference service: one set of zod schemas validates request
// bodies and generates the OpenAPI document, so the two cannot drift apart.
import { z } from 'zod'

export const registry: z.core.$ZodRegistry<{ id?: string; examples?: unknown[] }> = z.registry()

const lineItem = z
  .object({
    sku: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9._-]+$/),
    quantity: z.number().int().min(1).max(10_000),
  })
  .strict()
  .register(registry, { id: 'LineItem', examples: [{ sku: 'BOOK-042', quantity: 2 }] })

// Text members refuse what no client means to send and what breaks the systems orders go on
// to (logs, CSV exports, label printers, UTF-8 encoders): control characters (Unicode Cc:
// U+0000–U+001F, U+007F–U+009F) and lone surrogates (a "\ud800" JSON escape with no pair,
// which is no Unicode scalar value: RFC 8259 §8.2). A note is free text over several lines,
// so it may hold line breaks and tabs (\n, \r, \t); a customer name is one line.
const ONE_LINE = /^[^\p{Cc}\p{Cs}]*$/u
const MULTI_LINE = /^(?:[\t\n\r]|[^\p{Cc}\p{Cs}])*$/u
const customer = z
  .string()
  .min(1)
  .max(200)
  .regex(ONE_LINE, 'must not contain control characters or unpaired surrogates')
const note = z
  .string()
  .max(2000)
  .regex(
    MULTI_LINE,
    'must not contain control characters (but tab and line breaks) or unpaired surrogates',
  )
  .nullable()
const items = z.array(lineItem).min(1).max(100)

/** An order as the API returns it. */
const orderSchema = z
  .object({
    id: z.string(),
    status: z.enum(['open', 'cancelling', 'cancelled']),
    customer,
    items,
    note,
    version: z.number().int().nonnegative(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .register(registry, {
    id: 'Order',
    examples: [
      {
        id: 'ord_01KB3Q9Z5X4M8T2R7N6W1Y0C3D',
        status: 'open',
        customer: 'Ada Lovelace',
        items: [{ sku: 'BOOK-042', quantity: 2 }],
        note: null,
        version: 1,
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:00:00.000Z',
      },
    ],
  })

/** POST /v1/orders */
export const createOrderSchema = z
  .object({ customer, items, note: note.optional() })
  .strict()
  .register(registry, {
    id: 'CreateOrder',
    examples: [{ customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }],
  })

/** PUT /v1/orders/<id>: the whole resource (every writable member). */
export const replaceOrderSchema = z
  .object({ customer, items, note })
  .strict()
  .register(registry, {
    id: 'ReplaceOrder',
    examples: [
      { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 3 }], note: 'Gift wrap' },
    ],
  })

/**
 * PATCH /v1/orders/<id>: absolute assignments only (docs/spec.md §4.3 rule 8), so the same PATCH
 * applied twice gives the same result. No increments, no list operations. An empty patch `{}`
 * changes nothing and is no error (RFC 7396 §2: the target is returned unchanged).
 */
export const patchOrderSchema = z
  .object({ customer: customer.optional(), items: items.optional(), note: note.optional() })
  .strict()
  .register(registry, { id: 'PatchOrder', examples: [{ note: 'Leave at the door' }] })

/** The operation resource a 202 points at. */
const operationSchema = z
  .object({
    id: z.string(),
    kind: z.literal('order.cancel'),
    status: z.enum(['running', 'succeeded', 'failed']),
    target: z.string(),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
  })
  .register(registry, {
    id: 'Operation',
    examples: [
      {
        id: 'op_01KB3QB2H0P7D5V9G3S8K4E6MA',
        kind: 'order.cancel',
        status: 'running',
        target: '/v1/orders/ord_01KB3Q9Z5X4M8T2R7N6W1Y0C3D',
        created_at: '2026-11-22T10:05:00.000Z',
        completed_at: null,
      },
    ],
  })

export type Order = z.infer<typeof orderSchema>
export type CreateOrder = z.infer<typeof createOrderSchema>
export type Operation = z.infer<typeof operationSchema>
