/** Replaces secret values in a text before it is logged or shown to a model. */
export type Redactor = (text: string) => string;

/** Values this short would mask ordinary words; secrets worth hiding are longer. */
const shortestSecret = 4;

/** A redactor for the given secret values (an MCP server's env values or headers). */
export function createRedactor(secrets: readonly string[]): Redactor {
  // "Bearer <token>": the token alone may show up too.
  const parts = secrets.flatMap((secret) => [
    secret,
    ...secret.split(/\s+/).filter((part) => part.length >= 8),
  ]);
  const values = [...new Set(parts.filter((value) => value.length >= shortestSecret))].sort(
    (a, b) => b.length - a.length,
  );
  return (text) => values.reduce((redacted, value) => redacted.replaceAll(value, '[redacted]'), text);
}
