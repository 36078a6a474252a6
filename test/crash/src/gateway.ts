import { connectOperator, type OperatorClient } from '@demiurge/operator';

/** Connects to a serving host's gateway and performs the handshake. */
export async function openGateway(socket: string, name = 'crash-tests'): Promise<OperatorClient> {
  const client = await connectOperator(socket);
  try {
    await client.request('operator.initialize', { protocol_version: 1, client: { name, version: '0.1.0' } });
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}

/** What `operator.history` answers. */
export interface HistoryResult {
  readonly session_id: string;
  readonly messages: readonly { message_id: string; role: string; text: string; turn_id?: string }[];
}
