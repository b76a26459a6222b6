import { join } from 'node:path';
import { startLocalNatsServer, type LocalNatsOptions, type LocalNatsServer } from './localServer';
import { freeFixedPort } from './ports';

/** One node of a local cluster; `restart()` starts it again on the same ports and store, as a machine coming back. */
export interface LocalClusterNode {
  readonly name: string;
  readonly url: string;
  readonly running: boolean;
  /** The running server's pid (for its CPU time), or null while it is down. */
  readonly pid: number | null;
  /** SIGKILL, as a machine dying. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop). */
  stop(): Promise<void>;
  restart(): Promise<void>;
}

/** A JetStream cluster of nats-server processes on loopback (the quickstart's `NATS_CLUSTER_SIZE`, tests, benches). */
export interface LocalNatsCluster {
  /** Every node's client URL, comma-separated: what `NATS_URL` takes. */
  readonly url: string;
  readonly nodes: readonly LocalClusterNode[];
  node(name: string): LocalClusterNode;
  stop(): Promise<void>;
}

export interface LocalClusterOptions {
  /** Nodes (3 for R3; at least 2). */
  size: number;
  /** Each node's store goes in `<baseDir>/<name>`. */
  baseDir: string;
  host?: string;
  /** Client ports, one per node (default: free ports below the ephemeral range); cluster ports are picked likewise. */
  ports?: readonly number[];
  clusterName?: string;
  binary?: string;
  log?: NodeJS.WritableStream;
}

/** Where and how each node of a cluster runs, ports picked: what starts it, and starts it again after it died. */
export interface LocalClusterPlan {
  /** Every node's client URL, comma-separated. */
  readonly url: string;
  readonly nodes: ReadonlyArray<{ readonly name: string; readonly url: string; readonly options: LocalNatsOptions }>;
}

/**
 * Names (n1..nN), ports and routes of a local cluster, without starting it: the quickstart launcher starts each node
 * under a watcher of its own (restarted when it dies), tests and benches through `startLocalNatsCluster`.
 */
export const planLocalCluster = async (options: LocalClusterOptions): Promise<LocalClusterPlan> => {
  if (!Number.isInteger(options.size) || options.size < 2) throw new Error(`a cluster needs at least 2 nodes, got ${options.size}`);
  const host = options.host ?? '127.0.0.1';
  const names = Array.from({ length: options.size }, (_, i) => `n${i + 1}`);
  // Below the ephemeral range: a node restarted after a kill binds the same ports again, and a port from the
  // ephemeral range may meanwhile have gone to any outgoing connection or port-0 bind on the machine.
  const clientPorts: number[] = [];
  const routePorts: number[] = [];
  for (const [i] of names.entries()) {
    clientPorts.push(options.ports?.[i] ?? (await freeFixedPort()));
    routePorts.push(await freeFixedPort());
  }
  const routes = routePorts.map((port) => `nats://${host}:${port}`).join(',');
  const nodes = names.map((name, i) => ({
    name,
    url: `nats://${host}:${clientPorts[i]!}`,
    options: {
      storeDir: join(options.baseDir, name),
      port: clientPorts[i]!,
      host,
      ...(options.binary ? { binary: options.binary } : {}),
      ...(options.log ? { log: options.log } : {}),
      extraArgs: ['-n', name, '--cluster_name', options.clusterName ?? 'wagw', '--cluster', `nats://${host}:${routePorts[i]!}`, '--routes', routes],
    },
  }));
  return { url: nodes.map((n) => n.url).join(','), nodes };
};

/**
 * Starts `size` nats-server nodes routed to each other (names n1..nN). It resolves once every node accepts client
 * connections; JetStream is usable once the nodes have elected a meta leader (about 0.5 s on a fresh cluster, ~6 s
 * when restarted on existing stores), which the services wait for by themselves.
 */
export const startLocalNatsCluster = async (options: LocalClusterOptions): Promise<LocalNatsCluster> => {
  const plan = await planLocalCluster(options);
  const start = (i: number): Promise<LocalNatsServer> => startLocalNatsServer(plan.nodes[i]!.options);
  const started = await Promise.allSettled(plan.nodes.map((_, i) => start(i)));
  const servers: (LocalNatsServer | null)[] = started.map((s) => (s.status === 'fulfilled' ? s.value : null));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    // No half-started cluster is left running behind the error.
    await Promise.all(servers.flatMap((server) => (server ? [server.stop()] : [])));
    throw failed.reason;
  }
  const nodes = plan.nodes.map(({ name, url }, i): LocalClusterNode => ({
    name,
    url,
    get running() {
      return servers[i] !== null;
    },
    get pid() {
      return servers[i]?.pid ?? null;
    },
    kill: async () => {
      await servers[i]?.kill();
      servers[i] = null;
    },
    stop: async () => {
      await servers[i]?.stop();
      servers[i] = null;
    },
    restart: async () => {
      await servers[i]?.stop();
      servers[i] = await start(i);
    },
  }));
  return {
    url: plan.url,
    nodes,
    node: (name) => {
      const found = nodes.find((n) => n.name === name);
      if (!found) throw new Error(`no node ${name} in this cluster`);
      return found;
    },
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
};
