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
