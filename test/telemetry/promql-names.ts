/** What a PromQL expression refers to: its metric names, and the label names it matches or groups by. */
export interface PromqlReferences {
  metrics: string[];
  /** Label names in selectors (`{status="failed"}`), by metric. */
  selectorLabels: { metric: string; labels: string[] }[];
  /** Label names of `by (…)`, `without (…)`, `on (…)`, `ignoring (…)`. */
  groupingLabels: string[];
}

const keywords = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/**
 * A small reader of PromQL, enough for the expressions of our dashboards and alert rules: strings, ranges and
 * label matchers are taken out first, then every identifier not followed by `(` (a function or an
 * aggregation) and not a keyword is a metric name.
 */
export function promqlReferences(expression: string): PromqlReferences {
  const selectorLabels: PromqlReferences['selectorLabels'] = [];
  const groupingLabels: string[] = [];
  let text = expression.replace(/\[[^\]]*\]/g, ' ');
  text = text.replace(/\b(by|without|on|ignoring)\s*\(([^)]*)\)/g, (_match, _keyword, names: string) => {
    for (const name of names.split(',')) if (name.trim() !== '') groupingLabels.push(name.trim());
    return ' ';
  });
  text = text.replace(
    /([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}/g,
    (_match, metric: string | undefined, body: string) => {
      const labels = [...body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"/g)].map(
        (matcher) => matcher[1] as string,
      );
      if (metric) selectorLabels.push({ metric, labels });
      return metric ? ` ${metric} ` : ' ';
    },
  );
  text = text.replace(/"(?:[^"\\]|\\.)*"/g, ' ');
  const metrics = [...text.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)]
    .filter((match) => match[2] === undefined && !keywords.has((match[1] as string).toLowerCase()))
    .map((match) => match[1] as string)
    .filter((name) => !/^\d/.test(name));
  return { metrics: [...new Set(metrics)], selectorLabels, groupingLabels: [...new Set(groupingLabels)] };
}
