/**
 * The Fetch handler this example serves: the same code runs on any adapter. It reads only
 * Fetch APIs and answers errors as problems from the api-blocks catalog.
 *
 * @module
 */
import { problems, toProblemResponse } from '@api-blocks/problem-details'

/** Where the handler is mounted; its routes are relative to it. */
export const PREFIX = '/v1'
const MAX_NOTE_BYTES = 1024
const notes: string[] = []

/** A tiny notes API: `GET /v1/health`, `GET /v1/notes`, `POST /v1/notes` (text, ≤ 1 KiB). */
export async function handler(request: Request): Promise<Response> {
  const url = new URL(request.url)
  const route = `${request.method} ${url.pathname.slice(PREFIX.length)}`
  switch (route) {
    case 'GET /health':
      return Response.json({ status: 'ok' })
    case 'GET /notes':
      return Response.json({ notes })
    case 'POST /notes': {
      const text = await readText(request, MAX_NOTE_BYTES)
      if (text === undefined) {
        return toProblemResponse(problems.payloadTooLarge.create({ max_bytes: MAX_NOTE_BYTES }), {
          request,
        })
      }
      notes.push(text)
      return Response.json({ id: notes.length, text }, { status: 201 })
    }
    default:
      // Thrown problems become application/problem+json responses in every adapter.
      throw problems.notFound.error({ detail: `Nothing answers ${route}.` })
  }
}

// Reads the body as UTF-8, giving up (undefined) past `limit` bytes.
async function readText(request: Request, limit: number): Promise<string | undefined> {
  const reader = request.body?.getReader()
  const chunks: Uint8Array[] = []
  let length = 0
  for (let next = await reader?.read(); next && !next.done; next = await reader?.read()) {
    length += next.value.byteLength
    if (length > limit) {
      await reader?.cancel()
      return undefined
    }
    chunks.push(next.value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}
