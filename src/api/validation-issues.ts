/**
 * Fastify's validation errors (from fastify-type-provider-zod: `instancePath` "/parts/0/text", zod's issue
 * in `params`) as the fields a client must fix.
 */

export interface ValidationIssue {
  /** body, querystring, params or headers. */
  location: string;
  /** The field, e.g. `parts[0].text`; empty for the whole body. */
  path: string;
  message: string;
}

interface ReportedIssue {
  instancePath?: unknown;
  message?: unknown;
  keyword?: unknown;
  params?: { errors?: unknown; keys?: unknown };
}

interface NestedIssue {
  code?: unknown;
  path?: unknown;
  message?: unknown;
  expected?: unknown;
}

/**
 * One reported issue as the invalid fields. A union that failed reports, instead of a bare "invalid input",
 * the issues of the alternatives that got past the field's own type. Unknown keys are named one by one.
 */
export function validationIssues(reported: ReportedIssue, location: string): ValidationIssue[] {
  const segments =
    typeof reported.instancePath === 'string'
      ? reported.instancePath.split('/').filter((segment) => segment !== '')
      : [];
  const message = typeof reported.message === 'string' ? reported.message : 'invalid value';
  if (reported.keyword === 'unrecognized_keys' && Array.isArray(reported.params?.keys)) {
    return reported.params.keys.map((key) => ({
      location,
      path: formatPath([...segments, String(key)]),
      message: 'unknown field',
    }));
  }
  if (reported.keyword === 'invalid_union') {
    const nested = nestedUnionIssues(reported.params?.errors, segments);
    if (nested.issues.length > 0) return nested.issues.map((issue) => ({ location, ...issue }));
    if (nested.expected.length > 0) {
      return [{ location, path: formatPath(segments), message: `expected ${nested.expected.join(' or ')}` }];
    }
  }
  return [{ location, path: formatPath(segments), message }];
}

function nestedUnionIssues(
  alternatives: unknown,
  prefix: readonly string[],
): { issues: { path: string; message: string }[]; expected: string[] } {
  const issues: { path: string; message: string }[] = [];
  const expected: string[] = [];
  if (!Array.isArray(alternatives)) return { issues, expected };
  for (const alternative of alternatives) {
    if (!Array.isArray(alternative)) continue;
    const alternativeIssues = alternative as NestedIssue[];
    // An alternative that failed on the field's own type (a string where an array was given) says only
    // what it expected.
    const wrongType = alternativeIssues.find(
      (issue) => issue.code === 'invalid_type' && Array.isArray(issue.path) && issue.path.length === 0,
    );
    if (wrongType) {
      if (typeof wrongType.expected === 'string') expected.push(wrongType.expected);
      continue;
    }
    for (const issue of alternativeIssues) {
      const path = Array.isArray(issue.path) ? issue.path.map(String) : [];
      issues.push({
        path: formatPath([...prefix, ...path]),
        message: typeof issue.message === 'string' ? issue.message : 'invalid value',
      });
    }
  }
  return { issues, expected };
}

function formatPath(segments: readonly string[]): string {
  let text = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}

export function describeValidationIssues(issues: readonly ValidationIssue[]): string {
  const described = issues.map((issue) => {
    const where = issue.path === '' ? issue.location : `${issue.location}.${issue.path}`;
    return `${where}: ${issue.message}`;
  });
  return `invalid request: ${described.join('; ')}`;
}
