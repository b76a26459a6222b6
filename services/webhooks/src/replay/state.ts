import { asCurrentEvent, type RecordedEvent } from '@wagw/lib';
import type { ReplayEvent, ReplayRequested } from './events';

export type ReplayState =
  | { exists: false }
  | {
      exists: true;
      request: ReplayRequested['data'];
      nextSequence: number;
      replayed: number;
      /** Events recorded as dropped deliveries (after `stopped`). */
      dropped: number;
      /** Why the replay stopped sending (the webhook was switched off); null while it sends. */
      stopped: string | null;
      finished: boolean;
      reason: string | null;
    };

export const initialReplayState = (): ReplayState => ({ exists: false });

export const evolveReplay = (state: ReplayState, event: ReplayEvent): ReplayState => {
  if (event.type === 'ReplayRequested') {
    return { exists: true, request: event.data, nextSequence: 1, replayed: 0, dropped: 0, stopped: null, finished: false, reason: null };
  }
  if (!state.exists) return state;
  switch (event.type) {
    case 'ReplayProgressed':
      return { ...state, nextSequence: event.data.next_sequence, replayed: event.data.replayed, dropped: event.data.dropped ?? 0 };
    case 'ReplayStopped':
      return { ...state, stopped: event.data.reason };
    case 'ReplayFinished':
      return { ...state, finished: true, replayed: event.data.replayed, dropped: event.data.dropped ?? 0, reason: event.data.reason };
    default:
      return ignoreUnknown(event, state);
  }
};

const ignoreUnknown = (_event: never, state: ReplayState): ReplayState => state;

export const upcastReplay = (event: RecordedEvent): ReplayEvent => asCurrentEvent<ReplayEvent>(event);
