import type { Connection, ConnectionEvent, Connector } from '../../services/sessions/src/connector/port';

/** Connections that report only what the test emits; `emit` speaks for the instance's latest one. */
export class ScriptedConnector implements Connector {
  readonly name = 'scripted';
  private readonly listeners = new Map<string, (event: ConnectionEvent) => void>();
  /** How many connections were opened. */
  connects = 0;
  /** How long closing a connection takes (Baileys waits for its socket to end). */
  closeDelayMs = 0;

  async connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    this.connects++;
    this.listeners.set(instanceId, onEvent);
    const none = async (): Promise<never> => Promise.reject(new Error('not scripted'));
    return {
      send: async () => undefined,
      requestPairingCode: none,
      checkNumbers: none,
      listGroups: none,
      setTyping: none,
      markRead: none,
      logout: none,
      close: () => new Promise((resolve) => setTimeout(resolve, this.closeDelayMs)),
    };
  }

  emit(instanceId: string, event: ConnectionEvent): void {
    this.listeners.get(instanceId)?.(event);
  }

  downloadMedia = async (): Promise<never> => Promise.reject(new Error('not scripted'));
  purge = async (): Promise<void> => undefined;
  forgetContent = async (): Promise<void> => undefined;
}
