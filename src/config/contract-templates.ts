/**
 * The built-in contract templates (`contracts: [{template: <name>, …}]`): the fields and rules of a common
 * kind of result, which a contract's own `schema` adds to. A template is expanded when the config is read,
 * so a run's recorded definition holds the expanded contract (decision 0042): a later Ratchet that changes a
 * template does not change what a running run is checked against.
 */

/** A template's part of a contract: what its `schema` would say (the types as in `schema.required`). */
export interface ContractTemplate {
  /** What the template is for, for docs and errors. */
  description: string;
  required: Record<string, 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array'>;
  optional: Record<string, 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array'>;
  rules: readonly Record<string, unknown>[];
}

/** An ISO 8601 date, optionally with a time and a zone (`2026-12-06`, `2026-12-06T09:15:00Z`). */
const isoDateTime =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$';

export const contractTemplates = {
  database_record: {
    description: 'records read from or written to a table: {table, records, count?, query?, as_of?}',
    required: { table: 'string', records: 'array' },
    optional: { count: 'integer', query: 'string', as_of: 'string' },
    rules: [
      { field: 'table', pattern: '^[A-Za-z_][A-Za-z0-9_.]*$' },
      { field: 'table', max_length: 128 },
      { field: 'count', range: { min: 0 } },
      { field: 'as_of', pattern: isoDateTime },
    ],
  },
  analysis_result: {
    description: 'an analysis with its findings: {summary, findings, confidence, recommendations?, sources?}',
    required: { summary: 'string', findings: 'array', confidence: 'number' },
    optional: { recommendations: 'array', sources: 'array', method: 'string' },
    rules: [
      { field: 'summary', min_length: 1 },
      { field: 'confidence', range: { min: 0, max: 1 } },
    ],
  },
  api_response: {
    description: 'an HTTP API response as an agent reports it: {status, data?, error?, headers?}',
    required: { status: 'integer' },
    optional: { data: 'object', error: 'string', headers: 'object' },
    rules: [{ field: 'status', range: { min: 100, max: 599 } }],
  },
} as const satisfies Record<string, ContractTemplate>;

export type ContractTemplateName = keyof typeof contractTemplates;

/** The names of the built-in templates, in the order the docs list them. */
export const contractTemplateNames = Object.keys(contractTemplates) as ContractTemplateName[];
