import type { z } from 'zod';
import type { Message } from '../chat/index.js';
import type { ExtensionContext } from './context.js';

/** A team as a coordinator or a stop condition sees it. */
export interface TeamView {
  readonly name: string;
  /** The members in config order; a coordinator names them by `agent`. */
  readonly members: readonly { readonly agent: string; readonly role: string }[];
}

/** What a coordinator decides from (docs/extending.md, "Coordinators"): persisted data only. */
export interface CoordinatorView {
  readonly team: TeamView;
  /** Turns taken so far (choices of members that acted): 0 on the team run's first turn. */
  readonly turn: number;
  /** The team's shared chat: the run's input, then each member answer in turn order. */
  readonly shared: readonly Message[];
  /** The text of the shared chat's last message ('' when it is empty). */
  readonly lastText: string;
  /** The JSON text the session's shared state holds under `key`, or null when it holds nothing there. */
  readState(key: string): Promise<string | null>;
}

/**
 * A coordinator's decision:
 * - `act`: the members that act now, all at once, by agent name or by index in `team.members`; their answers
 *   are added to the shared chat in this order;
 * - `done`: the team is done; its answer is the shared chat's last message;
 * - `fail`: the team run fails with this message (code `coordinator_invalid`, or `max_rounds`).
 */
export type CoordinatorChoice =
  | { act: readonly (string | number)[] }
  | { done: true }
  | { fail: string; code?: 'max_rounds' | 'coordinator_invalid' };

/** What a coordinator's `select` is given besides the view: its options and the step's deterministic inputs. */
export interface CoordinatorContext<Options> extends ExtensionContext {
  /** The coordinator's fields from the config (all but `kind`), parsed by its `options` schema. */
  readonly options: Options;
  /**
   * Whether a stop condition holds now: `until` is one as configured (`{ <name>: <options> }`, e.g. the
   * `until` option of round_robin_until), a built-in or one registered in extensions.stopConditions.
   */
  stopConditionHolds(until: Readonly<Record<string, unknown>>): Promise<boolean>;
}

/** A coordinator kind: its name in the config, the schema of its fields, and how it chooses. */
export interface CoordinatorDefinition<Options = unknown> {
  /** The name configs use (`coordinator: { kind, … }`). */
  readonly kind: string;
  /** The schema of the coordinator's fields besides `kind` (a zod object schema). */
  readonly options: z.ZodType<Options>;
  /**
   * Chooses who acts next. Decide from the view and the context only: the choice of members is recorded
   * once (journal `team-select:<n>`) and a step that runs again acts on the recorded choice.
   */
  select(
    view: CoordinatorView,
    context: CoordinatorContext<Options>,
  ): CoordinatorChoice | Promise<CoordinatorChoice>;
}

/** What a stop condition is given: the team's shared chat and state, after a member's turn. */
export type StopConditionView = CoordinatorView;

/** A stop condition: a predicate on the team's progress, named in `until: { <name>: <options> }`. */
export interface StopConditionDefinition<Options = unknown> {
  /** The key configs use in `until`. */
  readonly name: string;
  /** The schema of the value under that key. */
  readonly options: z.ZodType<Options>;
  /** Whether the team is done. Checked after every turn; a pure function of the view and the options. */
  holds(
    view: StopConditionView,
    context: ExtensionContext & { readonly options: Options },
  ): boolean | Promise<boolean>;
}
