import { readFileSync } from 'node:fs';
import { invalidArgument } from '@wagw/lib';

/** A bad WA_* variable: stops the service at start with its one message (runMain), no stack. */
const badConfig = (message: string): Error => invalidArgument('bad_config', message);

export type WaVersion = [number, number, number];

/** How the Baileys connector reaches WhatsApp. Every field has a working default for the real service. */
export interface BaileysOptions {
  /** The WhatsApp Web socket. Default wss://web.whatsapp.com/ws/chat (a local fake server in tests). */
  webSocketUrl?: string;
  /** The WhatsApp Web version announced; a stale one is refused with 405 (client_outdated). Default: Baileys' bundled one. */
  version?: WaVersion;
  /** Media hosts (hostname[:port]) tried before the ones WhatsApp names; uploads always go over https. */
  uploadHosts?: string[];
  /** Accept any certificate from media hosts (a local fake media host in tests). */
  mediaTlsInsecure?: boolean;
  /** A CA (PEM) media hosts' certificates are checked against, instead of the system's. */
  mediaTlsCa?: string;
  /** The device as the phone lists it under "Linked devices": [os, browser, version]. Default Baileys' Ubuntu/Chrome. */
  browser?: [string, string, string];
  /** WebSocket handshake and send time-out. Default 20,000 (Baileys'). */
  connectTimeoutMs?: number;
  /** How long each QR code lasts. Default Baileys': 60 s for the first, 20 s for the next ones. */
  qrTimeoutMs?: number;
  /** The level of Baileys' own log lines (it is chatty below warn). Default 'warn'. */
  logLevel?: string;
}

type Env = Record<string, string | undefined>;

const present = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value ? value : undefined;
};

const parseVersion = (raw: string): WaVersion => {
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length !== 3 || !parts.every((part) => /^\d+$/.test(part))) {
    throw badConfig(`WA_VERSION must be three comma-separated integers such as "2,3000,1019707846", got "${raw}"`);
  }
  const [major, minor, patch] = parts.map(Number) as [number, number, number];
  return [major, minor, patch];
};

const parseUrl = (raw: string): string => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badConfig(`WA_WEBSOCKET_URL must be a ws:// or wss:// URL, got "${raw}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw badConfig(`WA_WEBSOCKET_URL must be a ws:// or wss:// URL, got "${raw}"`);
  return raw;
};

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$/;

const parseHosts = (raw: string): string[] => {
  const hosts = raw
    .split(',')
    .map((host) => host.trim())
    .filter((host) => host !== '');
  const bad = hosts.find((host) => !HOST.test(host));
  if (bad !== undefined) throw badConfig(`WA_MEDIA_UPLOAD_HOSTS must be a comma-separated list of hostname[:port], got "${bad}"`);
  return hosts;
};

const parseBool = (name: string, raw: string): boolean => {
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw badConfig(`${name} must be true or false, got "${raw}"`);
};

const readCa = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw badConfig(`WA_MEDIA_TLS_CA_FILE cannot be read (${path}): ${(error as Error).message}`);
  }
};

/**
 * The connector options from the environment: WA_WEBSOCKET_URL, WA_VERSION ("2,3000,1019707846"),
 * WA_MEDIA_UPLOAD_HOSTS (comma list of hostname[:port]), WA_MEDIA_TLS_CA_FILE (PEM) and WA_MEDIA_TLS_INSECURE.
 * A malformed value throws, naming the variable.
 */
export const baileysOptionsFromEnv = (env: Env = process.env): BaileysOptions => {
  const options: BaileysOptions = {};
  const url = present(env, 'WA_WEBSOCKET_URL');
  if (url) options.webSocketUrl = parseUrl(url);
  const version = present(env, 'WA_VERSION');
  if (version) options.version = parseVersion(version);
  const hosts = present(env, 'WA_MEDIA_UPLOAD_HOSTS');
  if (hosts) options.uploadHosts = parseHosts(hosts);
  const caFile = present(env, 'WA_MEDIA_TLS_CA_FILE');
  if (caFile) options.mediaTlsCa = readCa(caFile);
  const insecure = present(env, 'WA_MEDIA_TLS_INSECURE');
  if (insecure) options.mediaTlsInsecure = parseBool('WA_MEDIA_TLS_INSECURE', insecure);
  return options;
};
