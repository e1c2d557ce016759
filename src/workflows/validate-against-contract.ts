import { ConfigError, type LoadedConfig, loadConfig } from '../config/index.js';
import type { Extensions } from '../extensions/index.js';
import { decideCodeRules } from './contract-rules.js';
import { checkContract, compileContracts } from './core/contracts.js';

/** One way a value breaks a contract, with where in the value (`$`, `$.summary`, `$.items[2].id`). */
export interface ContractViolation {
  path: string;
  error_type: string;
  message: string;
}

/** A value checked against a contract outside any run. */
export interface ContractValidation {
  contract: string;
  valid: boolean;
  /** The contract's `schema_version`; null when it names none. */
  schema_version: string | null;
  errors: ContractViolation[];
  warnings: string[];
}

export interface ValidateAgainstContractOptions {
  /** The config that defines the contract: a path to load, or a config `loadConfig` loaded. */
  config: string | LoadedConfig;
  /**
   * The kinds registered in code (their contract rules are run); default: those the config was loaded with.
   * A config path is loaded with them.
   */
  extensions?: Extensions;
  /** Aborts a rule written in code that waits. */
  signal?: AbortSignal;
}

/** A check's field as a path in the value: `$` itself, a JSON Schema path as it is, a field under `$`. */
function pathOf(field: string): string {
  if (field.startsWith('$')) return field;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(field) ? `$.${field}` : `$[${JSON.stringify(field)}]`;
}

/**
 * Checks a value against a contract of a config by the contract's name (`name`, or `<from_agent>-><to_agent
 * or output>`), as a run's result would be checked (decision 0042): the same checks, its rules written in
 * code included. A string is read as an answer is (a JSON object, optionally in one ```json block); any
 * other value as that JSON. `max_execution_time_ms` is not checked: there is no run to time.
 * Throws a ConfigError when the config does not load or has no contract of that name (naming those it has).
 */
export async function validateAgainstContract(
  name: string,
  value: unknown,
  options: ValidateAgainstContractOptions,
): Promise<ContractValidation> {
  const loaded =
    typeof options.config === 'string'
      ? loadConfig(options.config, options.extensions ? { extensions: options.extensions } : {})
      : options.config;
  const extensions = options.extensions ?? (loaded.extensions as Extensions | undefined);
  const contracts = compileContracts(loaded.config.contracts);
  const contract = contracts.find((candidate) => candidate.name === name);
  if (!contract) {
    const known = contracts.map((candidate) => candidate.name);
    throw new ConfigError(loaded.path, [
      `no contract named "${name}" (${known.length > 0 ? `its contracts: ${known.join(', ')}` : 'it has no contracts'})`,
    ]);
  }
  const answer = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  const verdicts = await decideCodeRules({
    contract,
    answer,
    rules: new Map((extensions?.contractRules ?? []).map((rule) => [rule.kind, rule])),
    step: {
      sessionId: 'contract-check',
      runId: 'contract-check',
      agent: contract.config.from_agent,
      iteration: 0,
      now: new Date().toISOString(),
    },
    signal: options.signal ?? new AbortController().signal,
  });
  const checked = checkContract(contract, answer, undefined, verdicts);
  return {
    contract: checked.contract,
    valid: checked.valid,
    schema_version: checked.schema_version,
    errors: checked.errors.map((error) => ({
      path: pathOf(error.field),
      error_type: error.error_type,
      message: error.message,
    })),
    warnings: checked.warnings,
  };
}
