export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads until `ok` holds or `timeoutMs` passes, and returns the last value read (the caller asserts on it). */
export const eventually = async <T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10_000, everyMs = 50): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await sleep(everyMs);
  }
};
