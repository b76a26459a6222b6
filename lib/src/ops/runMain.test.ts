import { Writable } from 'node:stream';
import { invalidArgument } from '../errors';
import { createLogger } from '../log';
import { mainLogger, runMain } from './runMain';

/** A logger whose JSON lines are kept, to read what an operator would see. */
const capturingLogger = (): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('test', 'info', sink), lines };
};

describe('runMain', () => {
  afterEach(() => jest.restoreAllMocks());

  const badVariable = (): never => {
    throw invalidArgument('bad_config', 'WEBHOOK_CONCURRENCY must be an integer of at least 1, got "0"');
  };
  const settled = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };

  it('a config loader that throws a bad variable exits 78 (EX_CONFIG, not restarted) with that one message, not an uncaught exception', async () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const { logger, lines } = capturingLogger();
    expect(() => runMain(logger, badVariable)).not.toThrow();
    await settled();
    expect(exit.mock.calls).toEqual([[78]]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 60, msg: 'failed to start: WEBHOOK_CONCURRENCY must be an integer of at least 1, got "0"' });
    expect(lines[0]).not.toHaveProperty('err');
  });

  it('started by the launcher, it sends the bad variable to it (which prints it once) instead of logging it, and exits 78', async () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const { logger, lines } = capturingLogger();
    const reported: string[] = [];
    runMain(logger, badVariable, async (message) => reported.push(message) > 0);
    await settled();
    expect(reported).toEqual(['WEBHOOK_CONCURRENCY must be an integer of at least 1, got "0"']);
    expect(lines).toEqual([]);
    expect(exit.mock.calls).toEqual([[78]]);
  });

  it('a failure that is no bad setting is a crash: logged with its stack, exit code 1 (the launcher restarts it)', async () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const { logger, lines } = capturingLogger();
    const reported: string[] = [];
    runMain(
      logger,
      async () => Promise.reject(new Error('EADDRINUSE')),
      async (message) => reported.push(message) > 0,
    );
    await settled();
    expect(reported).toEqual([]);
    expect(lines).toEqual([expect.objectContaining({ level: 60, msg: 'failed to start', err: expect.objectContaining({ stack: expect.any(String) }) })]);
    expect(exit.mock.calls).toEqual([[1]]);
  });

  it.each([
    // The launcher's death is noticed at the next parent check (each second), a signal at once.
    ['the launcher is gone (SIGKILLed, its nats-server with it)', 5_000, 1_000],
    ['SIGTERM', 25_000, 0],
  ])('when %s, a close that hangs ends the process with exit code 1 after %i ms', async (why, deadlineMs, noticedAfterMs) => {
    jest.useFakeTimers();
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    // The parent pid as the service sees it: the launcher's, then init's once the launcher died.
    const original = Object.getOwnPropertyDescriptor(process, 'ppid');
    let parentPid = process.ppid;
    Object.defineProperty(process, 'ppid', { configurable: true, get: () => parentPid });
    const before = process.listeners('SIGTERM');
    const env = process.env.EXIT_WITH_PARENT;
    process.env.EXIT_WITH_PARENT = '1';
    try {
      const { logger, lines } = capturingLogger();
      runMain(logger, async () => ({ close: () => new Promise<void>(() => undefined) }));
      // start() resolved: the shutdown handlers are set.
      for (let i = 0; i < 10; i++) await Promise.resolve();
      if (why === 'SIGTERM') process.listeners('SIGTERM').find((listener) => !before.includes(listener))?.('SIGTERM');
      else parentPid = 1;
      jest.advanceTimersByTime(noticedAfterMs + deadlineMs - 1);
      expect(exit).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1);
      expect(exit).toHaveBeenCalledWith(1);
      expect(lines.map((line) => line.msg)).toEqual(['shutting down', 'shutdown took too long; exiting']);
    } finally {
      for (const listener of process.listeners('SIGTERM')) if (!before.includes(listener)) process.removeListener('SIGTERM', listener);
      for (const listener of process.listeners('SIGINT')) process.removeListener('SIGINT', listener);
      if (env === undefined) delete process.env.EXIT_WITH_PARENT;
      else process.env.EXIT_WITH_PARENT = env;
      if (original) Object.defineProperty(process, 'ppid', original);
      jest.useRealTimers();
    }
  });

  it('a bad LOG_LEVEL stops the process with one line and exit code 78, not the stack of an exception thrown at load', () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const exited: number[] = [];
    const exit = ((code: number) => {
      exited.push(code);
      throw new Error('exited');
    }) as (code: number) => never;
    const level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = 'verbose';
    try {
      expect(() => mainLogger('webhooks', exit)).toThrow('exited');
    } finally {
      if (level === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = level;
    }
    expect(exited).toEqual([78]);
    expect(stderr.mock.calls.map(([line]) => String(line))).toEqual([
      'webhooks: failed to start: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"\n',
    ]);
  });
});
