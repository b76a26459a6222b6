import type { SessionsConfig } from '../../services/sessions/src/config';
import { startWaEmulator } from '../emulator/emulator';
import type { WaEmulator, WaEmulatorOptions } from '../emulator/types';
import { decodeQr } from './qrCode';
import { startStack, type TestStack } from './stack';
import { eventually } from './wait';

/** A test stack whose sessions service runs the real Baileys connector against a WhatsApp Web emulator. */
export interface BaileysStack {
  emulator: WaEmulator;
  stack: TestStack;
  close(): Promise<void>;
}

export const startBaileysStack = async (sessions: Partial<SessionsConfig> = {}, emulatorOptions: WaEmulatorOptions = {}): Promise<BaileysStack> => {
  const emulator = await startWaEmulator({ qrRefCount: 3, ...emulatorOptions });
  const stack = await startStack({}, true, {
    connector: 'baileys',
    baileys: { webSocketUrl: emulator.url, uploadHosts: [emulator.mediaHost], mediaTlsCa: emulator.mediaCaPem, qrTimeoutMs: 3_000 },
    // The production TTL: a first login makes Baileys 7 generate and store 812 pre-keys, which holds this process's
    // event loop (shared by the whole stack here) for one to a few seconds on a busy 2-core machine.
    leaseTtlMs: 10_000,
    leaseRenewMs: 2_000,
    ...sessions,
  });
  return {
    emulator,
    stack,
    close: async () => {
      await stack.close();
      await emulator.stop();
    },
  };
};

/** Creates an instance over HTTP and links it: its QR code, scanned by the emulator's phone of `number`; connected in 20 s or throws. */
export const linkOverEmulator = async ({ stack, emulator }: BaileysStack, number: string): Promise<string> => {
  const id = (await stack.call('/v1/create_instance')).body.instance_id as string;
  const qr = await stack.call(`/v1/get_qrcode?instance_id=${id}`);
  const text = typeof qr.body.qrcode === 'string' ? decodeQr(qr.body.qrcode) : null;
  if (!text) throw new Error(`no QR code for ${id}: get_qrcode answered ${qr.status}`);
  await emulator.scan(text, number);
  const status = await eventually(
    () => stack.call(`/v1/status?instance_id=${id}`),
    (s) => s.body.state === 'connected',
    20_000,
  );
  if (status.body.state !== 'connected') throw new Error(`instance ${id} not connected after the scan (${String(status.body.state)})`);
  return id;
};
