/**
 * The drill's HTTP client: every request bounded by a client-side time-out (a request that runs into it is a
 * hang: the product promises an answer, a 503 at worst, within its own deadlines), every answer recorded, so the
 * drill can say afterwards that each failure was a 503 with a clear `{ error, code }`.
 */

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

/** A request's outcome; status 0 = no answer (a hang at the time-out, or a connection error). */
export interface Outcome {
  at: number;
  path: string;
  status: number;
  ms: number;
  code?: string;
  /** What made the outcome bad, if it is: any failure but a 503 (the drill sends only valid requests), a 503 without a clear error, a hang. */
  problem?: string;
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export class DrillHttp {
  readonly outcomes: Outcome[] = [];

  constructor(
    private readonly baseUrl: string,
    private readonly token: () => string,
    /** Longer than the gateway's longest deadline on the drill's routes (the send stream's 10 s). */
    readonly timeoutMs = 12_000,
  ) {}

  async call(path: string, options: CallOptions = {}): Promise<Answer> {
    const started = Date.now();
    const headers: Record<string, string> = { authorization: `Bearer ${this.token()}`, ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const route = path.split('?')[0]!;
    let status = 0;
    let text = '';
    let failure = '';
    try {
      const response = await fetch(`${this.baseUrl}${path}`, {
        method: options.method ?? 'GET',
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      failure = (error as Error).name === 'TimeoutError' ? `hang: no answer within ${this.timeoutMs} ms` : `no answer: ${String(error)}`;
    }
    const ms = Date.now() - started;
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      body = { raw: text.slice(0, 200) };
    }
    const code = typeof body.code === 'string' ? body.code : undefined;
    const outcome: Outcome = { at: started, path: route, status, ms, ...(code ? { code } : {}) };
    if (failure) outcome.problem = failure;
    else if (status !== 200 && status !== 503) outcome.problem = `${status} ${JSON.stringify(body).slice(0, 200)}`;
    else if (status === 503 && (typeof body.error !== 'string' || !body.error || !code))
      outcome.problem = `503 without { error, code }: ${JSON.stringify(body).slice(0, 200)}`;
    this.outcomes.push(outcome);
    return { status, body, ms };
  }

  /** A call the drill cannot go on without (setting up, reading back): retried on 503 and no answer, bounded. */
  async must(path: string, options: CallOptions = {}, attempts = 40): Promise<Answer> {
    let last: Answer | null = null;
    for (let attempt = 0; attempt < attempts; attempt++) {
      last = await this.call(path, options);
      if (last.status === 200) return last;
      if (last.status !== 503 && last.status !== 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`${options.method ?? 'GET'} ${path.split('?')[0]} answered ${last?.status}: ${JSON.stringify(last?.body).slice(0, 300)}`);
  }
}
