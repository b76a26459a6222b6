import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Curve, type proto } from '@whiskeysockets/baileys';
import { WebSocketServer } from 'ws';
import { ClientConnection } from './connection';
import { groupInboundNode } from './groups';
import { inboundMediaMessage } from './inboundMedia';
import { startMediaHost } from './mediaHost';
import { timelockNotification } from './restrictions';
import { deliver, sendServerReceipt } from './messaging';
import { certificateChain } from './noise';
import { parseQr } from './pairing';
import { Registry, USER_SERVER, numberOf, type PairedDevice, type ResolvedOptions } from './registry';
import type { ConnectionInfo, KickReason, PairedDeviceInfo, ReceivedMessage, Target, WaEmulator, WaEmulatorOptions } from './types';
import { trustEmulatorRoot } from './trustRoot';
import { peerOf } from './wsPeer';

const DEFAULT_WAIT_MS = 10_000;
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

const resolveOptions = (options: WaEmulatorOptions): ResolvedOptions => ({
  qrRefCount: options.qrRefCount ?? 6,
  replaceOnLogin: options.replaceOnLogin ?? true,
  settleMs: options.settleMs ?? 50,
  maxConnections: options.maxConnections ?? 32,
  maxReceived: options.maxReceived ?? 1_000,
  maxUploadBytes: options.maxUploadBytes ?? 16 * 1024 * 1024,
  minClientVersion: options.minClientVersion,
  log: options.log ?? (() => undefined),
});

/**
 * Starts a WhatsApp Web (multi-device) emulator on loopback: a WebSocket endpoint for Baileys and an HTTPS media
 * host. See README.md in this folder for what it covers.
 */
export const startWaEmulator = async (options: WaEmulatorOptions = {}): Promise<WaEmulator> => {
  const resolved = resolveOptions(options);
  // A Baileys client in this process must accept the emulator's certificates (child processes: emulatorTrustEnv).
  trustEmulatorRoot();
  const registry = new Registry(resolved, options.registered, {
    deliveryMs: options.receipts?.deliveryMs === undefined ? 10 : options.receipts.deliveryMs,
    readMs: options.receipts?.readMs === undefined ? 20 : options.receipts.readMs,
  });
  const media = await startMediaHost({ maxUploadBytes: resolved.maxUploadBytes, maxStoredBytes: 4 * resolved.maxUploadBytes });
  const staticKey = Curve.generateKeyPair();
  const deps = { registry, media, staticKey, certificate: certificateChain(staticKey), seed: options.seed ?? 'wa-emulator' };
  const live = new Set<ClientConnection>();
  let nextId = 0;

  const http: Server = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ server: http, maxPayload: MAX_MESSAGE_BYTES });
  let reachable = true;
  wss.on('connection', (socket) => {
    if (!reachable) {
      socket.terminate();
      return;
    }
    if (live.size >= resolved.maxConnections) {
      socket.close(1013, 'too many connections');
      return;
    }
    nextId += 1;
    const connection = new ClientConnection(nextId, peerOf(socket), deps);
    live.add(connection);
    socket.on('message', (data: Buffer) => connection.onMessage(data));
    socket.on('error', () => socket.terminate());
    socket.on('close', () => {
      live.delete(connection);
      connection.onClose();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = http.address() as AddressInfo;

  const devicesOf = (target: Target): PairedDevice[] => {
    if (typeof target !== 'string') {
      const device = target.jid === undefined ? undefined : registry.devices.get(target.jid);
      return device ? [device] : [];
    }
    if (target.includes(':')) {
      const device = registry.devices.get(target.includes('@') ? target : `${target}@${USER_SERVER}`);
      return device ? [device] : [];
    }
    return registry.devicesOf(numberOf(target));
  };

  const linksOf = (target: Target): ClientConnection[] => {
    if (typeof target !== 'string') return [...live].filter((connection) => connection.id === target.id);
    const jids = new Set(devicesOf(target).map((device) => device.jid));
    return [...live].filter((connection) => {
      const jid = connection.info.jid;
      return jid !== undefined && jids.has(jid);
    });
  };

  const sendMessage = async (to: Target, fromNumber: string, pushName: string, message: proto.IMessage, viaLid = false): Promise<string> => {
    const devices = devicesOf(to);
    if (devices.length === 0) throw new Error(`no paired device for ${typeof to === 'string' ? to : `connection ${to.id}`}`);
    const id = registry.nextMessageId();
    for (const device of devices) await deliver(registry, device, numberOf(fromNumber), message, { id, pushName, viaLid });
    return id;
  };

  /** Tells the number's connected devices its timelock as it is now (set with an end, or lifted). */
  const notifyTimelock = (number: string): void => {
    const restriction = registry.restrictions.of(number);
    for (const device of registry.devicesOf(number)) {
      if (device.link?.ready) device.link.send(timelockNotification(registry.nextMessageId(), restriction));
    }
  };

  return {
    url: `ws://127.0.0.1:${port}/ws/chat`,
    mediaHost: media.host,
    mediaCaPem: media.caPem,
    scan: async (qr: string, number: string): Promise<PairedDeviceInfo> => {
      const parts = parseQr(qr);
      const connection = [...live].find((candidate) => candidate.offers(parts.ref));
      if (!connection) throw new Error(`no connection is showing the QR ref ${parts.ref}`);
      return registry.infoOf(await connection.pair(parts, numberOf(number)));
    },
    devices: () => [...registry.devices.values()].map((device) => registry.infoOf(device)),
    connections: () => [...live].map((connection) => connection.info),
    waitForConnection: (predicate: (connection: ConnectionInfo) => boolean, timeoutMs = DEFAULT_WAIT_MS) =>
      registry.connectionWaiters.wait(
        [...live].map((connection) => connection.info),
        predicate,
        timeoutMs,
      ),
    received: () => registry.received(),
    waitForReceived: (predicate: (message: ReceivedMessage) => boolean = () => true, timeoutMs = DEFAULT_WAIT_MS) =>
      registry.receivedWaiters.wait(registry.received(), predicate, timeoutMs),
    clientReceipts: () => registry.clientReceipts(),
    pairingRequests: () => registry.pairingRequests(),
    createGroup: (subject, participants, options) => registry.groups.create(subject, participants.map(numberOf), options?.addressing).id,
    sendGroupText: async (to, groupId, fromNumber, pushName, text, options) => {
      const group = registry.groups.get(groupId);
      if (!group) throw new Error(`no group ${groupId}`);
      const devices = devicesOf(to);
      if (devices.length === 0) throw new Error(`no paired device for ${typeof to === 'string' ? to : `connection ${to.id}`}`);
      const id = registry.nextMessageId();
      for (const device of devices) {
        const node = await groupInboundNode(
          registry,
          device,
          group,
          numberOf(fromNumber),
          { conversation: text },
          { id, pushName, withoutPn: options?.withoutPn },
        );
        if (!device.link?.send(node)) throw new Error(`${device.jid} is not connected: group messages are delivered live only`);
      }
      return id;
    },
    chatStates: () => registry.chatStates(),
    sendText: (to, fromNumber, pushName, text, options) => sendMessage(to, fromNumber, pushName, { conversation: text }, options?.viaLid),
    restrict: (number, options) => {
      const until = options?.untilMs ?? null;
      registry.restrictions.set(numberOf(number), until);
      if (until !== null) notifyTimelock(numberOf(number));
    },
    unrestrict: (number) => {
      registry.restrictions.lift(numberOf(number));
      notifyTimelock(numberOf(number));
    },
    refusals: () => registry.refusals(),
    sendMedia: async (to, fromNumber, pushName, file) => sendMessage(to, fromNumber, pushName, await inboundMediaMessage(media, file)),
    sendReceipt: (to, fromNumber, messageId, type) => {
      for (const device of devicesOf(to)) sendServerReceipt(device, `${numberOf(fromNumber)}@${USER_SERVER}`, messageId, type);
    },
    setReachable: (value: boolean) => {
      reachable = value;
    },
    kick: async (target: Target, reason: KickReason) => {
      await Promise.all(linksOf(target).map((connection) => connection.kick(reason)));
    },
    stop: async () => {
      await Promise.all([...live].map((connection) => connection.terminate()));
      registry.timers.clear();
      registry.receivedWaiters.rejectAll(new Error('the emulator stopped'));
      registry.connectionWaiters.rejectAll(new Error('the emulator stopped'));
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await media.close();
    },
  };
};
