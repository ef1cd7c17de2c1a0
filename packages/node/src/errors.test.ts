import { ApiBlocksError } from '@api-blocks/core'
import { describe, expect, test } from 'vitest'
import type { NodeAdapterErrorCode } from './errors.ts'
import { NodeAdapterError } from './errors.ts'

describe('NodeAdapterError', () => {
  test('is an ApiBlocksError with the status of its code', () => {
    const statuses: Record<NodeAdapterErrorCode, number> = {
      INVALID_HOST: 400,
      INVALID_TARGET: 400,
      REQUEST_ABORTED: 400,
      NOT_A_RESPONSE: 500,
      RESPONSE_BODY_USED: 500,
      INVALID_BODY_CHUNK: 500,
      REQUEST_BODY_CONSUMED: 500,
    }
    for (const [code, status] of Object.entries(statuses)) {
      const error = new NodeAdapterError(code as NodeAdapterErrorCode, `because ${code}`)
      expect(error).toBeInstanceOf(ApiBlocksError)
      expect([code, error.status, error.toProblem().status]).toEqual([code, status, status])
    }
  })

  test('a 400 problem tells the client why; a 500 problem never carries the message', () => {
    const aborted = new NodeAdapterError('REQUEST_ABORTED', 'The request body was interrupted.')
    expect(aborted.toProblem()).toMatchObject({ detail: 'The request body was interrupted.' })
    const consumed = new NodeAdapterError('REQUEST_BODY_CONSUMED', 'a body parser ran first')
    expect(JSON.stringify(consumed.toProblem())).not.toContain('body parser')
  })

  test('keeps its cause and its name', () => {
    const cause = new Error('socket hang up')
    const error = new NodeAdapterError('REQUEST_ABORTED', 'gone', { cause })
    expect(error.cause).toBe(cause)
    expect(error.name).toBe('NodeAdapterError')
    expect(NodeAdapterError.kind).toBe('node.NodeAdapterError')
  })
})
