import { asCurrentEvent, type RecordedEvent } from '@wagw/lib';
import type { ReplayEvent, ReplayRequested } from './events';

export type ReplayState =
  { exists: false } | { exists: true; request: ReplayRequested['data']; nextSequence: number; replayed: number; finished: boolean; reason: string | null };

export const initialReplayState = (): ReplayState => ({ exists: false });

export const evolveReplay = (state: ReplayState, event: ReplayEvent): ReplayState => {
  if (event.type === 'ReplayRequested') return { exists: true, request: event.data, nextSequence: 1, replayed: 0, finished: false, reason: null };
  if (!state.exists) return state;
  switch (event.type) {
    case 'ReplayProgressed':
      return { ...state, nextSequence: event.data.next_sequence, replayed: event.data.replayed };
    case 'ReplayFinished':
      return { ...state, finished: true, replayed: event.data.replayed, reason: event.data.reason };
    default:
      return ignoreUnknown(event, state);
  }
};

const ignoreUnknown = (_event: never, state: ReplayState): ReplayState => state;

export const upcastReplay = (event: RecordedEvent): ReplayEvent => asCurrentEvent<ReplayEvent>(event);
