import { readFileSync } from 'node:fs';

/** Answers every rejected call while NATS fails over: hundreds of lines that say nothing of a stuck instance. */
const NOISE = new Set(['rpc answered unavailable']);

interface LogLine {
  level?: number;
  time?: number;
  msg?: string;
  instanceId?: string;
  key?: string;
  stream?: string;
  why?: string;
  err?: { message?: string };
}

/**
 * What the sessions replicas logged about the instances a failed drill names, and their warnings, one short line each
 * (`docker-compose logs` of the stack, as `saveLogs` wrote them): the CI output keeps the test's failures, not the
 * container logs, so a failure that cannot be reproduced is diagnosed from these. At most `limit` lines, oldest first.
 */
export const sessionsLogDigest = (logFile: string, instanceIds: readonly string[], limit: number): string[] => {
  const lines: string[] = [];
  for (const raw of readFileSync(logFile, 'utf8').split('\n')) {
    const bar = raw.indexOf('|');
    const container = raw.slice(0, bar).trim();
    if (bar < 0 || !container.startsWith('sessions')) continue;
    const json = raw.slice(raw.indexOf('{', bar));
    let line: LogLine;
    try {
      line = JSON.parse(json) as LogLine;
    } catch {
      continue;
    }
    const about = [line.instanceId, line.key, line.stream].find((s) => s !== undefined) ?? '';
    const named = instanceIds.some((id) => about.startsWith(id));
    if (NOISE.has(line.msg ?? '') || (!named && (line.level ?? 0) < 40)) continue;
    const at = line.time === undefined ? '?' : new Date(line.time).toISOString().slice(11, 23);
    const err = line.err?.message ? ` (${line.err.message.slice(0, 100)})` : '';
    lines.push(`log ${at} ${container.replace(/_\d+$/, '').replace(/^.*_/, '')}: ${line.msg ?? ''} ${about}${line.why ? ` ${line.why}` : ''}${err}`.trim());
  }
  return lines.slice(0, limit);
};
