/** Replaces secret values in a text before it is logged, stored or shown to a model. */
export type Redactor = (text: string) => string;

/** What a secret value is replaced with. */
export const redactedMark = '[redacted]';

/** Values this short would mask ordinary words; secrets worth hiding are longer. */
export const shortestSecret = 8;

/**
 * A redactor for the given secret values. Each value is also hidden in the forms it takes once it has been
 * written into JSON (escaped quotes and backslashes) or into a URL (percent-encoded), and a value such as
 * "Bearer <token>" hides the token alone too. Longer values are replaced first, so a secret that contains
 * another is hidden whole.
 */
export function createRedactor(secrets: Iterable<string>): Redactor {
  const values = new Set<string>();
  for (const secret of secrets) {
    for (const part of [secret, ...secret.split(/\s+/)]) {
      if (part.length < shortestSecret) continue;
      values.add(part);
      values.add(JSON.stringify(part).slice(1, -1));
      values.add(encodeURIComponent(part));
    }
  }
  const ordered = [...values].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return (text) => text;
  return (text) => {
    let redacted = text;
    for (const value of ordered) {
      if (redacted.includes(value)) redacted = redacted.replaceAll(value, redactedMark);
    }
    return redacted;
  };
}
