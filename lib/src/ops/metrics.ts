import { collectDefaultMetrics, register, Counter, Gauge, Histogram } from 'prom-client';

let collecting = false;

/** Starts the process-level metrics (CPU, memory, event loop) once per process. */
export const enableDefaultMetrics = (service: string): void => {
  if (collecting) return;
  collecting = true;
  register.setDefaultLabels({ service });
  collectDefaultMetrics();
};

export { register as metricsRegistry, Counter, Gauge, Histogram };

const sourcedGauges = new Map<string, Set<() => number | Promise<number>>>();

/**
 * A gauge whose value is read when Prometheus scrapes: the sum of every source registered under `name` (several
 * components of one process may feed it). Returns the function that unregisters this source.
 */
export const gaugeFrom = (name: string, help: string, read: () => number | Promise<number>): (() => void) => {
  let sources = sourcedGauges.get(name);
  if (!sources) {
    const set = new Set<() => number | Promise<number>>();
    sources = set;
    sourcedGauges.set(name, set);
    new Gauge({
      name,
      help,
      async collect() {
        const values = await Promise.all([...set].map(async (source) => source()));
        this.set(values.reduce((a, b) => a + b, 0));
      },
    });
  }
  sources.add(read);
  const registered = sources;
  return () => registered.delete(read);
};
