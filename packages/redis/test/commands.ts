/**
 * Counts the commands a node-redis client sends, without MONITOR: node-redis publishes every
 * command on the `node-redis:command` tracing channel of `node:diagnostics_channel`, with the
 * id of the client that sent it. One command is one round trip.
 *
 * @module
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'

const START = 'tracing:node-redis:command:start'

/** The part of a node-redis client this needs: its id, as the tracing context names it. */
export interface TracedClient {
  readonly _clientId: string
}

/** Runs `body` and returns the names of the commands `client` sent meanwhile, in order. */
export async function commandsSentBy(
  client: TracedClient,
  body: () => Promise<unknown>,
): Promise<string[]> {
  const commands: string[] = []
  const onStart = (message: unknown) => {
    const context = message as { command?: unknown; clientId?: unknown }
    if (context.clientId === client._clientId) commands.push(String(context.command))
  }
  subscribe(START, onStart)
  try {
    await body()
  } finally {
    unsubscribe(START, onStart)
  }
  return commands
}
