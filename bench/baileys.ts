import { performance } from 'node:perf_hooks';
import { startWaEmulator } from '../test/emulator/emulator';
import { emulatorTrustEnv } from '../test/emulator/trustRoot';
import { decodeQr } from '../test/harness/qrCode';
import { envPositiveInt, log, pool, startBenchNats } from './common';
import { withGateway, type Gateway, type MemorySample } from './sessionsGateway';

const MB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface BaileysBenchResult {
  instances: number;
  linkSeconds: number;
  idle: MemorySample;
  linked: MemorySample;
  /** (RSS with `instances` linked - RSS with none) / instances. */
  rssPerInstance: number;
  heapPerInstance: number;
  /** The sessions service's CPU while idle, in % of one core, measured over `cpuWindowSeconds`. */
  idleCpuPercent: number;
  linkedCpuPercent: number;
  cpuWindowSeconds: number;
}

/**
 * Creates `count` instances and links each through its QR code, scanned by the emulated phone (4 at a time: a
 * Baileys 7 first login generates and stores 812 pre-keys, 27 times Baileys 6's 30, and 10 at once made the
 * sessions service's NATS requests time out on this 2-core machine).
 */
const linkOverEmulator = async (gateway: Gateway, scan: (qr: string, number: string) => Promise<unknown>, count: number): Promise<void> => {
  await pool(count, 4, async (i) => {
    const { instance_id: id } = await gateway.get<{ instance_id: string }>('/create_instance');
    const { qrcode } = await gateway.get<{ qrcode: string }>(`/get_qrcode?instance_id=${id}`);
    const qr = decodeQr(qrcode);
    if (!qr) throw new Error(`the QR code of ${id} does not decode`);
    await scan(qr, `4916${String(i).padStart(8, '0')}`);
    for (let attempt = 0; ; attempt++) {
      const { state } = await gateway.get<{ state: string }>(`/status?instance_id=${id}`);
      if (state === 'connected') return;
      if (attempt >= 600) throw new Error(`instance ${id} not connected after scanning (state ${state})`);
      await sleep(50);
    }
  });
};

/** % of one core the sessions service used over the next `seconds`. */
const cpuPercent = async (gateway: Gateway, seconds: number): Promise<number> => {
  const before = gateway.cpu().get('sessions') ?? 0;
  await sleep(seconds * 1000);
  return (((gateway.cpu().get('sessions') ?? 0) - before) / seconds) * 100;
};

/**
 * The sessions service with the real Baileys connector, linked over the WhatsApp Web emulator (in this process):
 * its RSS and heap idle with none and with `BENCH_BAILEYS_INSTANCES` (200) linked idle instances, and its CPU at
 * idle (keep-alive pings every 30 s, hence the 30 s window).
 */
export const runBaileysBench = async (): Promise<BaileysBenchResult> => {
  const instances = envPositiveInt('BENCH_BAILEYS_INSTANCES', 200);
  const cpuWindowSeconds = 30;
  const emulator = await startWaEmulator({ maxConnections: instances + 50, maxReceived: 10 });
  const server = await startBenchNats();
  try {
    return await withGateway(
      server.url,
      async (gateway) => {
        await sleep(3_000);
        const idle = await gateway.memory(5);
        const idleCpuPercent = await cpuPercent(gateway, cpuWindowSeconds);
        log(
          `baileys: idle with 0 instances: RSS ${(idle.rss / MB).toFixed(1)} MB, heap ${(idle.heapUsed / MB).toFixed(1)} MB, CPU ${idleCpuPercent.toFixed(2)} %`,
        );
        log(`baileys: linking ${instances} instances over the emulator`);
        const start = performance.now();
        await linkOverEmulator(gateway, (qr, number) => emulator.scan(qr, number), instances);
        const linkSeconds = (performance.now() - start) / 1000;
        log(`baileys: ${instances} linked in ${linkSeconds.toFixed(1)} s`);
        await sleep(10_000);
        const linked = await gateway.memory(5);
        gateway.doneWithMemory();
        const linkedCpuPercent = await cpuPercent(gateway, cpuWindowSeconds);
        log(
          `baileys: idle with ${instances} linked: RSS ${(linked.rss / MB).toFixed(1)} MB, heap ${(linked.heapUsed / MB).toFixed(1)} MB, CPU ${linkedCpuPercent.toFixed(2)} %`,
        );
        return {
          instances,
          linkSeconds,
          idle,
          linked,
          rssPerInstance: (linked.rss - idle.rss) / instances,
          heapPerInstance: (linked.heapUsed - idle.heapUsed) / instances,
          idleCpuPercent,
          linkedCpuPercent,
          cpuWindowSeconds,
        };
      },
      { WA_CONNECTOR: 'baileys', WA_WEBSOCKET_URL: emulator.url, ...emulatorTrustEnv() },
    );
  } finally {
    await server.stop();
    await emulator.stop();
  }
};
