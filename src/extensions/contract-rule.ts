import type { z } from 'zod';
import type { ExtensionContext } from './context.js';

/**
 * What a contract rule kind is given for one check: the value of its field (or the whole result), its options,
 * deterministic inputs, and the step's signal.
 */
export interface ContractRuleCall<Options> {
  /** The value of the rule's `field`, or the whole result when the rule names no field. */
  readonly value: unknown;
  /** The whole result: the JSON object the run answered. */
  readonly result: Readonly<Record<string, unknown>>;
  /** The field the rule checks (`schema.rules[i].field`); undefined: the whole result. */
  readonly field: string | undefined;
  /** The rule's `params` from the config, parsed by its `options` schema. */
  readonly options: Options;
  /**
   * Deterministic inputs (see docs/extending.md, "Replay safety"). Outside a run (`validateAgainstContract`,
   * `ratchet contract check`) the ids name the check (`runId: "contract-check"`) and `now` is the clock's.
   */
  readonly context: ExtensionContext;
  /** Aborted at shutdown, at the run's cancellation and at its deadline: work that waits should stop. */
  readonly signal: AbortSignal;
}

/**
 * A rule's verdict: nothing (or an empty list) when the value passes; a problem, or several, when it does
 * not. Each becomes an error `{field, error_type: <kind>, message}` of the contract's check.
 */
export type ContractRuleVerdict = undefined | string | readonly string[];

/** A contract rule kind written in code: registered in `extensions.contractRules`, named in `schema.rules`. */
export interface ContractRuleDefinition<Options = unknown> {
  /** The name contracts use: `schema.rules: [{kind: <name>, field?, params?}]`. */
  readonly kind: string;
  /** The schema of its `params`; none: the rule takes none (a param is a config error). */
  readonly options?: z.ZodType<Options> | undefined;
  /**
   * Checks one result. It may be asynchronous and need not be deterministic: its verdict is recorded with the
   * commit that records the answer (decision 0042), and a step that runs again after that commit reads it.
   */
  check(call: ContractRuleCall<Options>): ContractRuleVerdict | Promise<ContractRuleVerdict>;
}

/** Any contract rule kind, whatever its options. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds rules of every option type.
export type AnyContractRule = ContractRuleDefinition<any>;

/**
 * Defines a contract rule kind (docs/extending.md, "Contract rules"), typed from its options schema. Register
 * it through the `extensions` of `loadConfig`, `RatchetWorker` and `validateAgainstContract`
 * (`{ contractRules: [definition] }`), then name it in a contract's `schema.rules`.
 * examples/contract-check.ts is one, run by its test.
 */
export function defineContractRule<Schema extends z.ZodType = z.ZodType<Record<string, never>>>(definition: {
  kind: string;
  options?: Schema;
  check(call: ContractRuleCall<z.output<Schema>>): ContractRuleVerdict | Promise<ContractRuleVerdict>;
}): ContractRuleDefinition<z.output<Schema>> {
  return {
    kind: definition.kind,
    options: definition.options as z.ZodType<z.output<Schema>> | undefined,
    check: definition.check,
  };
}
