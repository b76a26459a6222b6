import type { DrillService, DrillTarget, ReceivedWebhook } from '../drill/drill';
import { sleep } from '../harness/wait';
import { docker, type ComposeStack } from './composeStack';

/**
 * The compose stack as a drill target (test/drill/drill.ts): kills are `docker kill` (SIGKILL; volumes kept),
 * restarts `docker start` of the same container, ready again once Docker reports it healthy (its own health check:
 * JetStream up for a NATS node, /readyz for a service). Replica ids are compose service names, which
 * docker-compose.yml also gives the replicas as SESSIONS_REPLICA_ID and WEBHOOKS_WORKER_ID.
 */
const REPLICAS: Record<DrillService, string[]> = {
  instances: ['instances-1', 'instances-2'],
  sessions: ['sessions-1', 'sessions-2'],
  webhooks: ['webhooks-1', 'webhooks-2'],
};
/** server_name (docker-compose.yml: `--name n1`) -> compose service. */
const NATS_NODES: Record<string, string> = { n1: 'nats-1', n2: 'nats-2', n3: 'nats-3' };

const HEALTHY_WITHIN_MS = 90_000;

export class DockerDrillTarget implements DrillTarget {
  readonly kind = 'docker';
  readonly gatewayUrl: string;
  readonly natsUrl: string;

  constructor(
    private readonly stack: ComposeStack,
    readonly log: (line: string) => void = (line) => process.stderr.write(`[drill docker] ${line}\n`),
  ) {
    this.gatewayUrl = stack.gatewayUrl;
    this.natsUrl = stack.natsUrl;
  }

  token(account?: string): string {
    return this.stack.token(account);
  }

  /** The receiver runs in the compose network (service `receiver`); webhooks reach it by its service name. */
  webhookUrl(path: string): string {
    return `http://receiver:8080${path.startsWith('/') ? path : `/${path}`}`;
  }

  async webhooksReceived(): Promise<ReceivedWebhook[]> {
    const response = await fetch(`${this.stack.receiverUrl}/__received`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`receiver answered ${response.status}`);
    return (await response.json()) as ReceivedWebhook[];
  }

  async natsNodes(): Promise<string[]> {
    return Object.keys(NATS_NODES);
  }

  async killNatsNode(name: string): Promise<void> {
    await this.kill(this.natsService(name));
  }

  async restartNatsNode(name: string): Promise<void> {
    await this.start(this.natsService(name));
  }

  async replicas(service: DrillService): Promise<string[]> {
    return [...REPLICAS[service]];
  }

  async killReplica(service: DrillService, id: string): Promise<void> {
    await this.kill(this.replicaService(service, id));
  }

  async restartReplica(service: DrillService, id: string): Promise<void> {
    await this.start(this.replicaService(service, id));
  }

  private natsService(name: string): string {
    const service = NATS_NODES[name];
    if (!service) throw new Error(`unknown NATS node ${name} (known: ${Object.keys(NATS_NODES).join(', ')})`);
    return service;
  }

  private replicaService(service: DrillService, id: string): string {
    if (!REPLICAS[service].includes(id)) throw new Error(`unknown ${service} replica ${id}`);
    return id;
  }

  private async kill(service: string): Promise<void> {
    await docker('kill', '--signal', 'KILL', await this.stack.container(service));
    this.log(`killed ${service} (SIGKILL)`);
  }

  private async start(service: string): Promise<void> {
    const started = Date.now();
    await docker('start', await this.stack.container(service));
    for (;;) {
      const health = await this.stack.health(service);
      if (health === 'healthy') break;
      if (health === 'exited' || health === 'dead') throw new Error(`${service} stopped again after its restart`);
      if (Date.now() - started > HEALTHY_WITHIN_MS) throw new Error(`${service} not healthy ${HEALTHY_WITHIN_MS} ms after its restart (${health})`);
      await sleep(250);
    }
    this.log(`restarted ${service}, healthy after ${Date.now() - started} ms`);
  }
}
