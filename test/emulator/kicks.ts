import type { BinaryNode, proto } from '@whiskeysockets/baileys';
import type { KickReason } from './types';

/** What the server sends to end a connection for each reason (stream errors and login failures, as WhatsApp does). */
export const KICKS: Record<Exclude<KickReason, 'tcp-close'>, BinaryNode> = {
  'restart-required': { tag: 'stream:error', attrs: { code: '515' } },
  'service-unavailable': { tag: 'stream:error', attrs: { code: '503' } },
  replaced: { tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] },
  'device-removed': { tag: 'stream:error', attrs: { code: '401' }, content: [{ tag: 'conflict', attrs: { type: 'device_removed' } }] },
  'bad-session': { tag: 'stream:error', attrs: {}, content: [{ tag: 'xml-not-well-formed', attrs: {} }] },
  'logged-out': { tag: 'failure', attrs: { reason: '401', location: 'frc' } },
  forbidden: { tag: 'failure', attrs: { reason: '403', location: 'frc' } },
  'client-outdated': { tag: 'failure', attrs: { reason: '405', location: 'frc' } },
  'stream-end': { tag: 'xmlstreamend', attrs: {} },
};

/** Whether the client's WhatsApp Web version is older than `min` (a login the server refuses with 405). */
export const olderThan = (version: proto.ClientPayload.UserAgent.IAppVersion | null | undefined, min: readonly [number, number, number]): boolean => {
  const actual = [version?.primary ?? 0, version?.secondary ?? 0, version?.tertiary ?? 0];
  for (let i = 0; i < 3; i++) {
    const a = actual[i] ?? 0;
    const m = min[i] ?? 0;
    if (a !== m) return a < m;
  }
  return false;
};
