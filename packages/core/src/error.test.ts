import { describe, expect, test } from 'vitest'
import { ApiBlocksError, isProblemSource } from './error.ts'

class ShopError extends ApiBlocksError<'CARD_DECLINED' | 'OUT_OF_STOCK'> {
  static override readonly kind: string = 'test.ShopError'
}
class PaymentError extends ShopError {
  static override readonly kind: string = 'test.PaymentError'
}
// A subclass that names no kind of its own: recognised by the prototype chain only.
class Unnamed extends ShopError {}

/**
 * The same classes from a second instance of the module, as a duplicate install in
 * node_modules gives them (vite loads `?copy` as a module of its own).
 */
async function otherCopy() {
  const specifier = './error.ts?copy'
  const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('./error.ts')
  class OtherShop extends copy.ApiBlocksError<string> {
    static override readonly kind: string = 'test.ShopError'
  }
  return { copy, instance: new OtherShop('OUT_OF_STOCK', 'x', { status: 409 }) }
}

describe('ApiBlocksError', () => {
  test('carries a code, a status (default 500), a message, a cause and its class name', () => {
    const cause = new Error('socket closed')
    const error = new PaymentError('CARD_DECLINED', 'The card was declined.', {
      status: 402,
      cause,
    })
    expect(error.code).toBe('CARD_DECLINED')
    expect(error.status).toBe(402)
    expect(error.message).toBe('The card was declined.')
    expect(error.cause).toBe(cause)
    expect(error.name).toBe('PaymentError')
    expect(new ShopError('OUT_OF_STOCK', 'x').status).toBe(500)
  })

  test('refuses a status that is not an error status', () => {
    expect(() => new ShopError('OUT_OF_STOCK', 'x', { status: 200 })).toThrow(RangeError)
    expect(() => new ShopError('OUT_OF_STOCK', 'x', { status: 600 })).toThrow(RangeError)
  })

  test('RFC 9457 §4.2.1: the default problem is about:blank titled with the reason phrase', () => {
    expect(new ShopError('OUT_OF_STOCK', 'None left.', { status: 409 }).toProblem()).toEqual({
      type: 'about:blank',
      title: 'Conflict',
      status: 409,
      detail: 'None left.',
    })
  })

  test('a 5xx problem shows nothing of the error', () => {
    const problem = new ShopError('OUT_OF_STOCK', 'db password is hunter2').toProblem()
    expect(problem).toEqual({ type: 'about:blank', title: 'Internal Server Error', status: 500 })
  })

  test('instanceof follows the hierarchy', () => {
    const error = new PaymentError('CARD_DECLINED', 'x')
    expect(error).toBeInstanceOf(Error)
    expect(error).toBeInstanceOf(ApiBlocksError)
    expect(error).toBeInstanceOf(ShopError)
    expect(error).toBeInstanceOf(PaymentError)
    expect(new ShopError('OUT_OF_STOCK', 'x')).not.toBeInstanceOf(PaymentError)
    expect(new Unnamed('OUT_OF_STOCK', 'x')).toBeInstanceOf(ShopError)
    expect(new ShopError('OUT_OF_STOCK', 'x')).not.toBeInstanceOf(Unnamed)
    expect(new Error('plain')).not.toBeInstanceOf(ApiBlocksError)
    expect(null).not.toBeInstanceOf(ApiBlocksError)
  })

  test('instanceof holds for an instance of a duplicate copy of the same classes', async () => {
    const { copy, instance } = await otherCopy()
    expect(copy.ApiBlocksError).not.toBe(ApiBlocksError)
    expect(Object.getPrototypeOf(Object.getPrototypeOf(instance))).not.toBe(
      ApiBlocksError.prototype,
    )
    expect(instance).toBeInstanceOf(ShopError)
    expect(instance).toBeInstanceOf(ApiBlocksError)
    expect(instance).not.toBeInstanceOf(PaymentError)
    expect(new ShopError('OUT_OF_STOCK', 'x')).toBeInstanceOf(copy.ApiBlocksError)
  })

  test('a plain object that only claims the brand without a kind list is not an instance', () => {
    expect({ code: 'X', toProblem() {} }).not.toBeInstanceOf(ApiBlocksError)
  })
})

describe('isProblemSource', () => {
  test('is true for anything with toProblem(), false otherwise', () => {
    expect(isProblemSource(new ShopError('OUT_OF_STOCK', 'x'))).toBe(true)
    expect(isProblemSource({ toProblem: () => ({}) })).toBe(true)
    expect(isProblemSource({ toProblem: 1 })).toBe(false)
    expect(isProblemSource(null)).toBe(false)
    expect(isProblemSource('x')).toBe(false)
  })
})
