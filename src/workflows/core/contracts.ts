import type { CodeRuleConfig, ContractRuleConfig } from '../../config/contract-config-schema.js';
import { type ContractConfig, compileSafePattern } from '../../config/index.js';
import type { ContractError, ContractResult, RunRecord } from '../run-record.js';
import {
  answerJson,
  codePointLength,
  hasType,
  regexInputLimit,
  type SchemaRegex,
  schemaProblem,
  typeName,
} from './guardrails.js';
import type { ReplyDecision } from './reply-decision.js';

/**
 * Handoff contracts (`contracts:`): the check of a run's final answer against what the agent it goes to
 * (the one that delegated) or the session expects. Pure and bounded: the answer is model output (hostile),
 * parsed once, patterns from the config run on the linear-time engine over bounded input.
 */

/** A contract, its patterns compiled once. */
export interface ContractCheck {
  name: string;
  config: ContractConfig;
  patterns: SchemaRegex;
}

/**
 * What the rules written in code (`{kind, field?, params?}`) decided of one result, by the rule's index in
 * `schema.rules`: the problems each found (none: it passed). Decided outside the core, which only reads them.
 */
export type CodeRuleVerdicts = ReadonlyMap<number, readonly string[]>;

/** The most problems one code rule's verdict keeps, and the characters of each (a rule is foreign code). */
export const codeRuleVerdictLimits = { maxProblems: 20, maxChars: 1_000 } as const;

/** A code rule of a contract that applies to a result: its index, its entry, and the value it checks. */
export interface CodeRuleToRun {
  index: number;
  rule: CodeRuleConfig;
  value: unknown;
}

function isCodeRule(rule: ContractRuleConfig): rule is CodeRuleConfig {
  return 'kind' in rule;
}

/**
 * The code rules that check a result: each with the value it is given (its field's, or the whole result).
 * None when the result is no JSON object (that is the check's own error) or a rule's field is absent.
 */
export function codeRulesFor(contract: ContractCheck, answer: string): CodeRuleToRun[] {
  const rules = contract.config.schema?.rules ?? [];
  if (!rules.some(isCodeRule)) return [];
  const parsed = answerObject(answer);
  if (!('value' in parsed)) return [];
  const result = parsed.value;
  return rules.flatMap((rule, index) => {
    if (!isCodeRule(rule)) return [];
    if (rule.field === undefined) return [{ index, rule, value: result }];
    return Object.hasOwn(result, rule.field) ? [{ index, rule, value: result[rule.field] }] : [];
  });
}

/** A code rule's verdict as the check keeps it: a list of problems, bounded. */
export function boundedVerdict(verdict: unknown): string[] {
  const problems = verdict === undefined ? [] : Array.isArray(verdict) ? verdict : [verdict];
  const { maxProblems, maxChars } = codeRuleVerdictLimits;
  const kept = problems.slice(0, maxProblems).map((problem) => {
    const text = typeof problem === 'string' ? problem : (JSON.stringify(problem) ?? String(problem));
    return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
  });
  if (problems.length > maxProblems) kept.push(`and ${problems.length - maxProblems} more problems`);
  return kept;
}

export function compileContracts(configs: readonly ContractConfig[]): ContractCheck[] {
  return configs.map((config) => {
    const patterns = new Map<string, RegExp>();
    for (const rule of config.schema?.rules ?? []) {
      if ('pattern' in rule) patterns.set(rule.pattern, compileSafePattern(rule.pattern));
    }
    return {
      name: config.name ?? `${config.from_agent}->${config.to_agent ?? 'output'}`,
      config,
      patterns: { patterns, limit: regexInputLimit() },
    };
  });
}

/**
 * The contract a run's result is held to: the one from its agent to the agent that delegated to it (a child
 * run: `lineage[0]`), or from its agent with no `to_agent` (a run with no parent).
 */
export function contractFor(
  contracts: readonly ContractCheck[],
  run: Pick<RunRecord, 'agent' | 'parent' | 'lineage'>,
): ContractCheck | undefined {
  const to = run.parent ? run.lineage[0] : undefined;
  if (run.parent && to === undefined) return undefined;
  return contracts.find(
    (contract) => contract.config.from_agent === run.agent && contract.config.to_agent === to,
  );
}

/** The JSON object an answer holds, or why it holds none. */
function answerObject(answer: string): { value: Record<string, unknown> } | { error: ContractError } {
  const parsed = answerJson(answer);
  if (!parsed.ok) return { error: { field: '$', error_type: parsed.why, message: parsed.reason } };
  const { value } = parsed;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      error: {
        field: '$',
        error_type: 'not_an_object',
        message: `the result must be a JSON object, got ${typeName(value)}`,
      },
    };
  }
  return { value: value as Record<string, unknown> };
}

/** The confidence an answer states: a JSON object's `confidence` between 0 and 1, else null. */
export function statedConfidence(answer: string): number | null {
  const trimmed = answer.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('```')) return null;
  const parsed = answerObject(answer);
  if (!('value' in parsed)) return null;
  const confidence = parsed.value.confidence;
  return typeof confidence === 'number' && confidence >= 0 && confidence <= 1 ? confidence : null;
}

/**
 * A run's final answer checked against its contract: every error found, not only the first. `verdicts` are
 * what its code rules decided (codeRulesFor lists them); a code rule without one is an error of the check.
 * `executionTimeMs` undefined: no run to time (a standalone check), `max_execution_time_ms` is not checked.
 */
export function checkContract(
  contract: ContractCheck,
  answer: string,
  executionTimeMs: number | undefined,
  verdicts: CodeRuleVerdicts = new Map(),
): ContractResult {
  const { config } = contract;
  const errors: ContractError[] = [];
  const warnings: string[] = [];
  const rules: NonNullable<ContractResult['rules']> = [];
  if (
    config.max_execution_time_ms !== undefined &&
    executionTimeMs !== undefined &&
    executionTimeMs > config.max_execution_time_ms
  ) {
    errors.push({
      field: 'execution_time_ms',
      error_type: 'too_slow',
      message: `the run took ${executionTimeMs} ms, over the contract's ${config.max_execution_time_ms} ms`,
    });
  }
  const needsObject =
    config.schema !== undefined ||
    config.json_schema !== undefined ||
    config.required_confidence !== undefined;
  if (needsObject) {
    const parsed = answerObject(answer);
    if ('error' in parsed) errors.push(parsed.error);
    else {
      const value = parsed.value;
      if (config.schema) checkFields(contract, value, errors, warnings);
      for (const { index, rule } of codeRulesFor(contract, answer)) {
        const problems = verdicts.get(index);
        rules.push({ kind: rule.kind, field: rule.field ?? null, valid: problems?.length === 0 });
        for (const message of problems ?? [`rule "${rule.kind}" gave no verdict`])
          errors.push({ field: rule.field ?? '$', error_type: rule.kind, message });
      }
      if (config.json_schema) {
        const problem = schemaProblem(config.json_schema, value, '$', contract.patterns);
        if (problem !== undefined) {
          const at = problem.indexOf(': ');
          errors.push({
            field: at > 0 ? problem.slice(0, at) : '$',
            error_type: 'json_schema',
            message: at > 0 ? problem.slice(at + 2) : problem,
          });
        }
      }
      if (config.required_confidence !== undefined) {
        const confidence = value.confidence;
        if (typeof confidence !== 'number') {
          errors.push({
            field: 'confidence',
            error_type: 'missing_confidence',
            message: `state a numeric confidence (0 to 1): the contract requires at least ${config.required_confidence}`,
          });
        } else if (confidence < config.required_confidence) {
          errors.push({
            field: 'confidence',
            error_type: 'low_confidence',
            message: `confidence ${confidence} is below the required ${config.required_confidence}`,
          });
        }
      }
    }
  }
  return {
    contract: contract.name,
    valid: errors.length === 0,
    errors,
    warnings,
    schema_version: config.schema_version ?? null,
    ...(rules.length > 0 ? { rules } : {}),
  };
}

function checkFields(
  contract: ContractCheck,
  value: Record<string, unknown>,
  errors: ContractError[],
  warnings: string[],
): void {
  const schema = contract.config.schema;
  if (!schema) return;
  const typed = { ...schema.optional, ...schema.required };
  for (const field of Object.keys(schema.required)) {
    if (!Object.hasOwn(value, field))
      errors.push({
        field,
        error_type: 'missing_field',
        message: `the required field "${field}" is missing`,
      });
  }
  for (const [field, type] of Object.entries(typed)) {
    if (Object.hasOwn(value, field) && !hasType(value[field], type)) {
      errors.push({
        field,
        error_type: 'wrong_type',
        message: `expected ${type}, got ${typeName(value[field])}`,
      });
    }
  }
  const extra = Object.keys(value).filter((field) => !Object.hasOwn(typed, field) && field !== 'confidence');
  if (extra.length > 0 && Object.keys(typed).length > 0) {
    const shown = extra.slice(0, 5).map((field) => `"${field.slice(0, 40)}"`);
    warnings.push(`fields the contract does not name: ${shown.join(', ')}${extra.length > 5 ? ', …' : ''}`);
  }
  for (const rule of schema.rules) {
    if (isCodeRule(rule) || !Object.hasOwn(value, rule.field)) continue;
    const problem = ruleProblem(contract, rule, value[rule.field]);
    if (problem) errors.push({ field: rule.field, ...problem });
  }
}

function ruleProblem(
  contract: ContractCheck,
  rule: Exclude<NonNullable<ContractConfig['schema']>['rules'][number], CodeRuleConfig>,
  value: unknown,
): { error_type: string; message: string } | undefined {
  const length =
    typeof value === 'string' ? codePointLength(value) : Array.isArray(value) ? value.length : undefined;
  if ('min_length' in rule) {
    if (length === undefined)
      return { error_type: 'wrong_type', message: 'min_length applies to a string or an array' };
    if (length < rule.min_length)
      return {
        error_type: 'min_length',
        message: `length ${length} is below the minimum of ${rule.min_length}`,
      };
    return undefined;
  }
  if ('max_length' in rule) {
    if (length === undefined)
      return { error_type: 'wrong_type', message: 'max_length applies to a string or an array' };
    if (length > rule.max_length)
      return {
        error_type: 'max_length',
        message: `length ${length} is over the maximum of ${rule.max_length}`,
      };
    return undefined;
  }
  if ('pattern' in rule) {
    if (typeof value !== 'string')
      return { error_type: 'wrong_type', message: 'pattern applies to a string' };
    if (value.length > contract.patterns.limit)
      return {
        error_type: 'pattern',
        message: `too long (${value.length} characters) to check against /${rule.pattern}/ (at most ${contract.patterns.limit})`,
      };
    const pattern = contract.patterns.patterns.get(rule.pattern) ?? compileSafePattern(rule.pattern);
    return pattern.test(value)
      ? undefined
      : { error_type: 'pattern', message: `must match /${rule.pattern}/` };
  }
  if ('range' in rule) {
    if (typeof value !== 'number') return { error_type: 'wrong_type', message: 'range applies to a number' };
    const { min, max } = rule.range;
    if ((min !== undefined && value < min) || (max !== undefined && value > max))
      return {
        error_type: 'range',
        message: `${value} is outside ${min ?? '-∞'}..${max ?? '∞'}`,
      };
    return undefined;
  }
  if (!rule.enum.some((allowed) => allowed === value))
    return {
      error_type: 'enum',
      message: `must be one of ${rule.enum.map((allowed) => JSON.stringify(allowed)).join(', ')}`,
    };
  return undefined;
}

/** The run's error when its result broke its contract: the errors as JSON, for the model that reads it. */
export function contractViolation(result: ContractResult): string {
  return `the result broke handoff contract "${result.contract}": ${JSON.stringify(result.errors)}`;
}

/**
 * A final answer as the run records it: with the confidence it states, and checked against its contract. A
 * result that breaks the contract ends the run as failed (contract_violated), the check kept in its record.
 */
export function checkedFinalAnswer(
  contracts: readonly ContractCheck[],
  run: Pick<RunRecord, 'agent' | 'parent' | 'lineage' | 'started_at' | 'created_at'>,
  decision: Extract<ReplyDecision, { kind: 'final' }>,
  now: string,
  verdicts: CodeRuleVerdicts = new Map(),
): ReplyDecision {
  const confidence = decision.confidence ?? statedConfidence(decision.result);
  const contract = contractFor(contracts, run);
  if (!contract) return { ...decision, confidence };
  const executionTimeMs = Math.max(0, Date.parse(now) - Date.parse(run.started_at ?? run.created_at));
  const checked = checkContract(contract, decision.result, executionTimeMs, verdicts);
  if (!checked.valid)
    return {
      kind: 'failed',
      code: 'contract_violated',
      message: contractViolation(checked),
      contract: checked,
    };
  return { ...decision, confidence, contract: checked };
}
