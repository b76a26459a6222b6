import { collectDefaultMetrics, register, Counter, Histogram } from 'prom-client';

let collecting = false;

/** Starts the process-level metrics (CPU, memory, event loop) once per process. */
export const enableDefaultMetrics = (service: string): void => {
  if (collecting) return;
  collecting = true;
  register.setDefaultLabels({ service });
  collectDefaultMetrics();
};

export { register as metricsRegistry, Counter, Histogram };
