/**
 * The cluster drill (issue 11, item 5), written once and run against two kinds of deployment:
 *   - plain processes on a local 3-node NATS cluster (test/e2e/clusterDrill.e2e.test.ts), and
 *   - the compose stack in Docker (test/containers/**), which implements the same `DrillTarget`.
 *
 * CONTRACT for an implementer of `DrillTarget` (read this before writing one):
 *   - Every address here is reachable from the test process (bind published ports to 127.0.0.1).
 *   - `natsUrl`: a comma-separated list of every NATS node's client URL as seen from the test process. The drill
 *     connects to it to read the EVENTS stream's leader (`jsm.streams.info('EVENTS').cluster.leader`) and the
 *     sandbox ledger (KV `sandbox_platform_sent`). The drill ignores the servers' cluster gossip (it keeps to this
 *     list), so container-internal advertised addresses do no harm.
 *   - Node names are nats-server `server_name`s, exactly as JetStream reports them in `cluster.leader`
 *     (locally n1..n3; in compose whatever the config names them). `killNatsNode` = SIGKILL (`docker kill`), the
 *     node's store kept; `restartNatsNode` starts it again on the same store and resolves once it accepts clients.
 *   - Replica ids: for `sessions` the id MUST be the replica's SESSIONS_REPLICA_ID and for `webhooks` its
 *     WEBHOOKS_WORKER_ID, because the drill picks which replica to kill from the leases they hold in NATS KV
 *     (it kills one that is working, not an idle one). For `instances` any stable name. `replicas()` lists every
 *     configured replica, running or not. `killReplica` = SIGKILL; `restartReplica` starts it again with the same
 *     id and resolves once it has started (its start log line, or its health check).
 *   - Webhooks: `webhookUrl(path)` is the URL the webhooks service must call (in Docker e.g.
 *     `http://receiver:8080/path`; the service needs WEBHOOK_ALLOW_PRIVATE_NETWORKS=true). The receiver answers
 *     every POST with 200 and records it; `webhooksReceived()` returns every request so far, in arrival order, with
 *     the raw body and the three Standard Webhooks headers: the drill verifies the signatures itself with the
 *     secrets `set_webhook` answered, so the receiver needs no secret.
 *   - The gateway runs with WA_CONNECTOR=sandbox (the drill links instances with /v1/sandbox/scan) and the
 *     sessions replicas with the sandbox connector sharing the KV ledger (more than one replica does that).
 *   - `token(account)` returns a bearer token valid for an hour (sign with AUTH_JWT_SECRET: `issueToken`).
 *   - Nothing here stops the deployment: the caller owns its lifetime.
 */

export type DrillService = 'instances' | 'sessions' | 'webhooks';

/** One webhook request as the receiver got it (raw, so the drill can verify the signature). */
export interface ReceivedWebhook {
  /** The request path, e.g. `/drill/i0`. */
  path: string;
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
  /** The raw request body (JSON text). */
  body: string;
  /** When it arrived (ms since the epoch, the receiver's clock). */
  at: number;
}

export interface DrillTarget {
  /** For the report: `processes`, `docker`, ... */
  readonly kind: string;
  /** The gateway's base URL, e.g. `http://127.0.0.1:3000` (no trailing slash). */
  readonly gatewayUrl: string;
  token(account?: string): string;
  /** Every NATS node's client URL, comma-separated (see the contract above). */
  readonly natsUrl: string;
  webhookUrl(path: string): string;
  webhooksReceived(): Promise<ReceivedWebhook[]>;
  /** The NATS nodes' server names. */
  natsNodes(): Promise<string[]>;
  killNatsNode(name: string): Promise<void>;
  restartNatsNode(name: string): Promise<void>;
  replicas(service: DrillService): Promise<string[]>;
  killReplica(service: DrillService, id: string): Promise<void>;
  restartReplica(service: DrillService, id: string): Promise<void>;
  /** Progress lines (optional; default: nothing). */
  log?(line: string): void;
}

export interface DrillOptions {
  /** Linked instances, each with its webhook. */
  instances: number;
  /** Per instance: least time between the starts of two sends. */
  sendEveryMs: number;
  /** Load before the first kill, between kills, and after the restarts. */
  warmupMs: number;
  betweenKillsMs: number;
  afterRestartsMs: number;
  /** How long the drill waits for sends to be accepted again after the leader kill before it moves on anyway. */
  recoveryWaitMs: number;
  /** How long the drill waits for everything accepted to be sent, in the histories and on the webhooks. */
  convergeTimeoutMs: number;
  /** A message the platform took this long before a sessions replica was killed may lack its receipts. */
  receiptGraceMs: number;
}

export { runDrill, DEFAULT_DRILL_OPTIONS, type DrillReport } from './run';
