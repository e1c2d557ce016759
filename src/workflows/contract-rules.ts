import { RatchetError } from '../errors/index.js';
import { type AnyContractRule, type ExtensionStep, extensionContext } from '../extensions/index.js';
import { boundedVerdict, type CodeRuleVerdicts, type ContractCheck, codeRulesFor } from './core/contracts.js';
import { answerJson } from './core/guardrails.js';

/**
 * Runs the contract rules written in code (`defineContractRule`) that check one answer, in rule order, and
 * gives their verdicts for the pure check (core/contracts.ts). Shell code: a rule may be asynchronous and
 * need not be deterministic, which is why its verdict is recorded with the answer's commit (decision 0042).
 * A rule that throws, or a kind this process does not have, fails with `contract_rule_failed`, naming it.
 */
export async function decideCodeRules(input: {
  contract: ContractCheck;
  answer: string;
  rules: ReadonlyMap<string, AnyContractRule>;
  step: ExtensionStep;
  signal: AbortSignal;
}): Promise<CodeRuleVerdicts> {
  const toRun = codeRulesFor(input.contract, input.answer);
  const verdicts = new Map<number, readonly string[]>();
  if (toRun.length === 0) return verdicts;
  const parsed = answerJson(input.answer);
  const result = (parsed.ok ? parsed.value : {}) as Record<string, unknown>;
  for (const { index, rule, value } of toRun) {
    const definition = input.rules.get(rule.kind);
    if (!definition) {
      throw new RatchetError(
        'contract_rule_failed',
        `contract "${input.contract.name}" names rule kind "${rule.kind}", which is not registered in this ` +
          `process's extensions.contractRules: register it (defineContractRule) wherever the contract is checked`,
      );
    }
    try {
      const verdict = await definition.check({
        value,
        result,
        field: rule.field,
        options: rule.params,
        context: extensionContext(rule.kind, { ...input.step, scope: `contract-rule-${index}` }),
        signal: input.signal,
      });
      verdicts.set(index, boundedVerdict(verdict));
    } catch (error) {
      throw new RatchetError(
        'contract_rule_failed',
        `contract rule "${rule.kind}" of contract "${input.contract.name}" failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }
  return verdicts;
}
