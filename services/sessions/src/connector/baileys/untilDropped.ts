/**
 * `work` on a socket, failed as soon as that socket is dropped: Baileys' `end` takes its own close listeners off
 * first, so a query in flight (a number check, a send's device lookup) is never failed by the close and waits out its
 * 60 s time-out. A send hung so on a dead socket used up its whole retry window (send_failed after 57 s) and was never
 * tried on the live socket that replaced it; failed now, it is retried there.
 */
export const untilDropped = <T>(dropped: AbortSignal, work: Promise<T>): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const onDrop = (): void => reject(new Error('The WhatsApp socket closed under the call: retried on the next one'));
    if (dropped.aborted) return onDrop();
    dropped.addEventListener('abort', onDrop, { once: true });
    work.then(resolve, reject).finally(() => dropped.removeEventListener('abort', onDrop));
  });
