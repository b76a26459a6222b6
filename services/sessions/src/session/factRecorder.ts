import { isAppError, Lanes, type Logger } from '@wagw/lib';

export interface FactRecorderOptions {
  /** How long a fact is retried while the event store is unavailable before it is given up (and logged as lost). */
  retryForMs: number;
  /** Backoff between attempts: from `firstDelayMs`, doubling, at most `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_FACT_RECORDER_OPTIONS: FactRecorderOptions = { retryForMs: 10 * 60_000, firstDelayMs: 100, maxDelayMs: 2_000 };

/** Facts of different instances are recorded in parallel, at most this many at once. */
const CONCURRENCY = 256;

/**
 * Records what the platform reported (lifecycle changes, receipts, inbound messages), which exists nowhere else:
 * one instance's facts in the order they were reported, each retried while the event store is unavailable (a NATS
 * node dying, a leader being elected, a dropped connection: seconds on a cluster) instead of being dropped after one
 * failed append. A retry is safe because every fact's command id is fixed before its first attempt, so a repeat of
 * an append that was stored after all is recognised by the store.
 */
export class FactRecorder {
  private readonly lanes = new Lanes(CONCURRENCY);

  constructor(
    private readonly logger: Logger,
    private readonly options: FactRecorderOptions = DEFAULT_FACT_RECORDER_OPTIONS,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** Queues `append` behind the instance's earlier facts; `what` names it in the logs. */
  record(instanceId: string, what: string, append: () => Promise<void>): void {
    this.lanes.push(instanceId, () => this.untilStored(instanceId, what, append));
  }

  /** Resolves once the facts queued so far under `instanceId` are stored or given up. */
  stored(instanceId: string): Promise<void> {
    return this.lanes.settled(instanceId);
  }

  /** Resolves once every fact queued so far is stored or given up. */
  idle(): Promise<void> {
    return this.lanes.idle();
  }

  private async untilStored(instanceId: string, what: string, append: () => Promise<void>): Promise<void> {
    const giveUpAt = Date.now() + this.options.retryForMs;
    let delay = this.options.firstDelayMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await append();
        if (attempt > 1) this.logger.info({ instanceId, what, attempts: attempt }, 'platform fact recorded after retries');
        return;
      } catch (error) {
        const retryable = isAppError(error) && error.kind === 'unavailable';
        if (!retryable || Date.now() + delay > giveUpAt) {
          this.logger.error({ err: error, instanceId, what, attempts: attempt }, 'a platform fact could not be recorded');
          return;
        }
        if (attempt === 1) this.logger.warn({ err: error, instanceId, what }, 'recording a platform fact failed; retrying');
        await this.sleep(delay);
        delay = Math.min(delay * 2, this.options.maxDelayMs);
      }
    }
  }
}
