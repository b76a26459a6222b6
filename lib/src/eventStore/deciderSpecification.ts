import { deepStrictEqual, fail } from 'node:assert/strict';
import { AppError } from '../errors';
import type { Decider } from './commandHandler';
import type { NewEvent } from './port';

export interface DeciderWhen<E> {
  /** The events the command decides, compared deeply; `[]` means it decides nothing. */
  then(expected: E[]): void;
  /** The AppError code the command is refused with. */
  thenThrows(code: string): AppError;
}

export interface DeciderGiven<C, E, S> {
  /** The state the given events fold into, for checks of `evolve` itself. */
  state: S;
  when(command: C): DeciderWhen<E>;
}

/**
 * Given/when/then for a pure decider (Emmett's `DeciderSpecification`): the given events are folded by the decider's
 * own `evolve`, the command is decided against the result, and the decided events (or the refusal) are checked.
 * `node:assert` keeps it runner-independent, like `StoreSpecification` one level up.
 *
 * @example
 * const given = DeciderSpecification.for(instanceDecider);
 * given(created).when({ type: 'ResetInstance', account: 'acme', now }).then([instanceEvent('InstanceReset', now, {})]);
 */
export const DeciderSpecification = {
  for:
    <C, E extends NewEvent, S>(decider: Decider<C, E, S>) =>
    (...history: E[]): DeciderGiven<C, E, S> => {
      const state = history.reduce((folded, event) => decider.evolve(folded, event), decider.initialState());
      return {
        state,
        when: (command) => ({
          then: (expected) => deepStrictEqual(decider.decide(command, state), expected),
          thenThrows: (code) => {
            try {
              decider.decide(command, state);
            } catch (error) {
              if (!(error instanceof AppError)) throw error;
              deepStrictEqual(error.code, code, error.message);
              return error;
            }
            return fail(`expected the command to be refused with ${code}, but it was decided`);
          },
        }),
      };
    },
};
