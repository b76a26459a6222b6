interface Circuit {
  failures: number;
  openUntil: number;
}

/**
 * One circuit per endpoint: after `threshold` consecutive failures it opens for `coolDownMs`, during which no
 * attempt is made (jobs wait instead of burning their retries); then one attempt decides: success closes it,
 * failure opens it again.
 */
export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();

  constructor(
    private readonly threshold = 5,
    private readonly coolDownMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** 0 when an attempt may go out now, else how long to wait. */
  waitMs(key: string): number {
    const circuit = this.circuits.get(key);
    return circuit ? Math.max(0, circuit.openUntil - this.now()) : 0;
  }

  record(key: string, success: boolean): void {
    if (success) {
      this.circuits.delete(key);
      return;
    }
    const circuit = this.circuits.get(key) ?? { failures: 0, openUntil: 0 };
    circuit.failures += 1;
    if (circuit.failures >= this.threshold) circuit.openUntil = this.now() + this.coolDownMs;
    this.circuits.set(key, circuit);
  }

  /** How many circuits are open now (a metric). */
  openCount(): number {
    const now = this.now();
    return [...this.circuits.values()].filter((c) => c.openUntil > now).length;
  }
}

const FIRST_DEFERRAL_MS = 30_000;
const MAX_DEFERRAL_MS = 10 * 60_000;

/**
 * How long an open circuit puts a delivery off: the circuit's wait, and at least 30 s doubled for each time in a row
 * (`deferrals`, from 1), up to 10 min, plus up to a second's jitter so the deliveries put off together come back
 * spread. The doubling keeps a long outage from recording a due marker per delivery every 30 s; the cap bounds how
 * long deliveries lag once the endpoint is back.
 */
export const deferralMs = (openMs: number, deferrals: number, random: () => number): number =>
  Math.min(MAX_DEFERRAL_MS, Math.max(openMs, FIRST_DEFERRAL_MS * 2 ** Math.max(0, deferrals - 1))) + Math.floor(random() * 1_000);
