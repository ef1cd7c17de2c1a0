/**
 * Clients below fetch, for what fetch hides: the bytes on the wire and a client that hangs
 * up mid-response.
 *
 * @module
 */
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'

/** A response as it came off the socket. */
export interface RawResponse {
  readonly statusLine: string
  /** Header field lines in order, names lower-cased, values as sent. */
  readonly fields: ReadonlyArray<readonly [string, string]>
  /** Every byte after the blank line that ends the header section. */
  readonly rest: Buffer
}

/**
 * Sends `head` (request line and header lines, without the final blank line) with
 * `Connection: close` and reads the answer to the end of the connection.
 */
export async function rawExchange(url: string, head: string): Promise<RawResponse> {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) })
  await once(socket, 'connect')
  socket.end(`${head}\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`)
  const chunks: Buffer[] = []
  for await (const chunk of socket) chunks.push(chunk as Buffer)
  const bytes = Buffer.concat(chunks)
  const end = bytes.indexOf('\r\n\r\n')
  if (end === -1) throw new Error(`no complete header section in ${JSON.stringify(`${bytes}`)}`)
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n')
  const fields = lines.map((line) => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const
  })
  return { statusLine, fields, rest: bytes.subarray(end + 4) }
}

/** The values of every field line named `name`. */
export function fieldValues(response: RawResponse, name: string): string[] {
  return response.fields.filter(([field]) => field === name).map(([, value]) => value)
}

/**
 * GETs `url`, waits for the first body bytes, then destroys the connection. Resolves with
 * those first bytes once the socket is closed.
 */
export async function hangUpAfterFirstChunk(url: string): Promise<string> {
  const request = httpRequest(url, { agent: false })
  request.end()
  const [response] = (await once(request, 'response')) as [import('node:http').IncomingMessage]
  const [chunk] = (await once(response, 'data')) as [Buffer]
  request.on('error', () => {})
  response.on('error', () => {})
  request.destroy()
  if (!request.socket?.destroyed) await once(request, 'close')
  return chunk.toString()
}

/** A response read whole by {@link postOnNewConnection}. */
export interface PlainResponse {
  readonly status: number
  readonly headers: import('node:http').IncomingHttpHeaders
  readonly body: string
}

/**
 * POSTs `body` on a connection of its own, closed afterwards, so what the server does with
 * the connection later cannot affect other tests.
 */
export async function postOnNewConnection(url: string, body: Uint8Array): Promise<PlainResponse> {
  const request = httpRequest(url, { method: 'POST', agent: false })
  // The server may answer before it has read the whole body and then stop reading: the
  // rest of the upload can fail, the answer is what counts.
  request.on('error', () => {})
  request.end(body)
  const [response] = (await once(request, 'response')) as [import('node:http').IncomingMessage]
  const chunks: Buffer[] = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  request.destroy()
  return {
    status: response.statusCode ?? 0,
    headers: response.headers,
    body: Buffer.concat(chunks).toString(),
  }
}
