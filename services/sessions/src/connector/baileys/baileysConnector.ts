import type { Agent } from 'node:https';
import { initAuthCreds } from '@whiskeysockets/baileys';
import type { Logger, NatsHandle } from '@wagw/lib';
import { MediaUnavailable, type Connection, type ConnectionEvent, type Connector, type MediaDownload } from '../port';
import { BaileysConnection } from './baileysConnection';
import { parseInboundRef } from './inboundRef';
import { newInstanceCaches, type InstanceCaches } from './instanceCaches';
import { AuthStateStore, isLinked, type InstanceAuthState } from './kvAuthState';
import { downloadMedia } from './mediaDownload';
import type { BaileysOptions } from './options';
import { SentMessageStore } from './sentStore';
import { defaultSocketFactory, mediaAgentFor, socketConfig, type BaileysLogger, type SocketFactory } from './socket';
import { restartsAsInfo } from './restartLog';

export interface BaileysConnectorParts {
  auth: AuthStateStore;
  sent: SentMessageStore;
  logger: Logger;
  options?: BaileysOptions;
  /** Makes the sockets; Baileys' `makeWASocket` unless a test hands in a fake. */
  makeSocket?: SocketFactory;
}

/**
 * The `baileys` connector: WhatsApp Web through Baileys, with each instance's credentials and Signal keys in NATS
 * KV (any replica can take an instance over without a new QR code) and its sent messages kept a day (re-sends,
 * receipts after a restart). One set of caches per instance serves all its sockets.
 */
export class BaileysConnector implements Connector {
  readonly name = 'baileys';
  private readonly caches = new Map<string, InstanceCaches>();
  private readonly open = new Map<string, BaileysConnection>();
  private readonly options: BaileysOptions;
  private readonly makeSocket: SocketFactory;
  private readonly fetchAgent: Agent | undefined;

  constructor(private readonly parts: BaileysConnectorParts) {
    this.options = parts.options ?? {};
    this.makeSocket = parts.makeSocket ?? defaultSocketFactory;
    this.fetchAgent = mediaAgentFor(this.options);
  }

  /** The connector over the KV buckets `wa_auth` and `wa_sent` (created when missing). */
  static async open(nats: NatsHandle, logger: Logger, options: BaileysOptions = {}): Promise<BaileysConnector> {
    const [auth, sent] = await Promise.all([AuthStateStore.open(nats, logger), SentMessageStore.open(nats)]);
    return new BaileysConnector({ auth, sent, logger, options });
  }

  /**
   * Opens a connection from the stored credentials: a linked instance logs in (`connected` follows), an unlinked
   * one shows QR codes. An open connection of the same instance here ends first (`disconnected`, `replaced`).
   */
  async connect(instanceId: string, onEvent: (event: ConnectionEvent) => void): Promise<Connection> {
    await this.open.get(instanceId)?.replaced();
    const auth = await this.authStateOf(instanceId);
    const caches = this.cachesOf(instanceId);
    // Another replica may have moved the Signal sessions on since this one last ran the instance.
    caches.signalKeys.flushAll();
    const logger = this.parts.logger.child({ instanceId });
    const baileysLogger = this.baileysLogger(instanceId);
    const connection: BaileysConnection = new BaileysConnection({
      instanceId,
      emit: onEvent,
      auth,
      caches,
      sent: this.parts.sent,
      logger,
      makeSocket: () =>
        this.makeSocket(
          socketConfig({
            options: this.options,
            auth,
            caches,
            logger: baileysLogger,
            fetchAgent: this.fetchAgent,
            getMessage: async (key) => {
              if (!key.id) return undefined;
              const record = await this.parts.sent.get(instanceId, key.id).catch((error: unknown) => {
                logger.warn({ err: error }, 'reading a sent message for a re-send failed');
                return null;
              });
              return record?.message ?? undefined;
            },
          }),
        ),
      purge: () => this.wipe(instanceId),
      onEnded: () => {
        if (this.open.get(instanceId) === connection) this.open.delete(instanceId);
      },
    });
    this.open.set(instanceId, connection);
    connection.start();
    return {
      send: (message) => connection.send(message),
      requestPairingCode: (number) => connection.requestPairingCode(number),
      checkNumbers: (numbers) => connection.checkNumbers(numbers),
      listGroups: () => connection.listGroups(),
      setTyping: (to, typing) => connection.setTyping(to, typing),
      markRead: (ref) => connection.markRead(ref),
      logout: () => connection.logout(),
      close: () => connection.close(),
    };
  }

  /** Fetches and decrypts a received file from WhatsApp's media hosts (over the media TLS settings); no socket needed. */
  async downloadMedia(ref: string, maxBytes: number): Promise<MediaDownload> {
    const { media } = parseInboundRef(ref);
    if (!media) throw new MediaUnavailable('no_media', 'The message has no media');
    return downloadMedia(media, maxBytes, this.fetchAgent);
  }

  /** Wipes the instance's credentials, keys and sent messages; a connection still open here closes first. */
  async purge(instanceId: string): Promise<void> {
    await this.open.get(instanceId)?.close();
    await this.wipe(instanceId);
  }

  /** Erasure: the sent messages kept for re-sends lose their content (the bucket keeps one revision: it is gone). */
  async forgetContent(instanceId: string, before: number): Promise<void> {
    await this.parts.sent.forgetContent(instanceId, before);
  }

  private async wipe(instanceId: string): Promise<void> {
    this.caches.delete(instanceId);
    await Promise.all([this.parts.auth.purge(instanceId), this.parts.sent.purge(instanceId)]);
  }

  /** The stored auth state when linked; fresh creds otherwise (a pairing that never finished is wiped first). */
  private async authStateOf(instanceId: string): Promise<InstanceAuthState> {
    const { auth } = this.parts;
    const stored = await auth.readCreds(instanceId);
    if (stored && isLinked(stored)) return auth.state(instanceId, stored);
    if (stored) await auth.purge(instanceId);
    return auth.state(instanceId, initAuthCreds());
  }

  private cachesOf(instanceId: string): InstanceCaches {
    let caches = this.caches.get(instanceId);
    if (!caches) {
      caches = newInstanceCaches();
      this.caches.set(instanceId, caches);
    }
    return caches;
  }

  /** Baileys' own log lines for the instance: at `logLevel` (warn), or quieter when our logger is. */
  private baileysLogger(instanceId: string): BaileysLogger {
    const { logger } = this.parts;
    const level = this.options.logLevel ?? 'warn';
    const bindings = { instanceId, component: 'baileys' };
    return restartsAsInfo(logger.isLevelEnabled(level) ? logger.child(bindings, { level }) : logger.child(bindings));
  }
}
