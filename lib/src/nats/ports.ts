import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The first port the OS hands out for port-0 binds and outgoing connections (Linux; 32768 elsewhere). */
const ephemeralLow = (): number => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
};

/**
 * Why `port` on `host` cannot be listened on (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`, ...), or null when it can: a
 * listen with the options a Node HTTP server uses, so the answer is the one that server would get.
 */
export const listenProblem = (port: number, host: string): Promise<string | null> =>
  new Promise((done) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    server.listen(port, host, () => server.close(() => done(null)));
  });

const bindable = async (port: number, host: string): Promise<boolean> => (await listenProblem(port, host)) === null;

/** Ports this process handed out already (two picks must not collide before either is bound). */
const handedOut = new Set<number>();

/**
 * A free port on `host` (loopback by default) below the OS's ephemeral range, for a process that binds it some
 * seconds later and again after a restart: a port from `freePort()` (port 0) can meanwhile be handed to any other process binding port 0
 * (another test file running in parallel did: EADDRINUSE), one outside that range only to whoever names it.
 */
export const freeFixedPort = async (host = '127.0.0.1'): Promise<number> => {
  const high = Math.min(ephemeralLow(), 65_536) - 1;
  const low = Math.max(1_024, high - 12_000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || !(await bindable(port, host))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
};
