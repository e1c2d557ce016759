/** Replaces secret values in a text before it is logged, stored or shown to a model. */
export type Redactor = (text: string) => string;

/** What a secret value is replaced with. */
export const redactedMark = '[redacted]';

/** Values this short would mask ordinary words; secrets worth hiding are longer. */
export const shortestSecret = 8;

/**
 * The shortest prefix of a secret (or of one of its encodings) that is hidden on its own: half the value,
 * but never more than 12 characters (12 characters of a random key identify it) and never fewer than
 * shortestSecret. So an upstream error that quotes a key truncated (`sk-live-0123456789ab...`) or with all
 * but its last 4 characters is caught, while a vendor's common prefix alone (`sk-`, `sk-proj`) is not.
 */
export function shortestHiddenPrefix(length: number): number {
  return Math.min(length, Math.max(shortestSecret, Math.min(12, Math.ceil(length / 2))));
}

/** A trie of the hidden forms: a node is terminal when the text up to it is to be hidden. */
interface TrieNode {
  next: Map<number, TrieNode>;
  terminal: boolean;
}

/**
 * A redactor for the given secret values. Each value is hidden as written, escaped inside JSON,
 * percent-encoded, as base64 (standard and URL-safe, at each of the 3 byte alignments, so it is found inside
 * a larger encoded blob such as a Basic auth header of `user:secret`) and as hex (lower and upper case);
 * every long enough prefix of each of these forms is hidden too (shortestHiddenPrefix of the value, counted
 * in the form's own units: twice as many hex digits, 4/3 as many base64 characters). A value such as
 * "Bearer <token>" hides the token alone, in all its forms. Where forms overlap, the longest is hidden.
 *
 * The forms are computed once, here. Matching is one native regex over the shortest hidden prefix of every
 * form (literal alternatives: no backtracking beyond their length) to find where a form starts, then a walk
 * down a trie of all forms from there for the longest one that matches: linear in the text for any text a
 * secret does not occur in, and bounded by the longest form at each place one does.
 */
export function createRedactor(secrets: Iterable<string>): Redactor {
  const root: TrieNode = { next: new Map(), terminal: false };
  const starts = new Set<string>();
  const add = (form: string, minimum: number) => {
    if (form.length < shortestSecret) return;
    const shortest = Math.min(form.length, Math.max(shortestSecret, minimum));
    addForm(root, form, shortest);
    starts.add(form.slice(0, shortest));
  };
  for (const secret of secrets) {
    if (secret.length < shortestSecret) continue;
    // A value with spaces (a header such as "Bearer <token>") is hidden whole; its parts get every form.
    for (const form of textForms(secret)) add(form, form.length);
    for (const part of secret.split(/\s+/)) {
      if (part.length < shortestSecret) continue;
      // The shortest hidden prefix is counted in the part's characters, so an encoding hides no fewer bytes.
      const prefix = shortestHiddenPrefix(part.length);
      for (const form of textForms(part)) add(form, prefix);
      for (const form of hexForms(part)) add(form, 2 * prefix);
      for (const form of base64Forms(part)) add(form, Math.ceil((4 * prefix) / 3));
    }
  }
  if (starts.size === 0) return (text) => text;
  const alternatives = [...starts].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const finder = new RegExp(alternatives.join('|'), 'g');
  return (text) => {
    finder.lastIndex = 0;
    let match = finder.exec(text);
    if (match === null) return text;
    let redacted = '';
    let copiedUpTo = 0;
    while (match !== null) {
      const end = longestFormEnd(root, text, match.index);
      redacted += `${text.slice(copiedUpTo, match.index)}${redactedMark}`;
      copiedUpTo = end;
      finder.lastIndex = end;
      match = finder.exec(text);
    }
    return redacted + text.slice(copiedUpTo);
  };
}

/** The value as written, escaped inside JSON, and percent-encoded. */
function textForms(value: string): string[] {
  return [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)];
}

/** The value's UTF-8 bytes as hex, lower and upper case. */
function hexForms(value: string): string[] {
  const hex = Buffer.from(value, 'utf8').toString('hex');
  return [hex, hex.toUpperCase()];
}

/**
 * The value's UTF-8 bytes as base64, standard and URL-safe. A base64 blob that holds the value after 0, 1
 * or 2 other bytes spells it three different ways; for each, the characters that depend on the value's
 * bytes alone are kept (the first and last may mix in the neighbouring bytes), plus the whole encoding with
 * its padding.
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = [bytes.toString('base64')];
  for (let alignment = 0; alignment < 3; alignment++) {
    const total = alignment + bytes.length;
    const encoded = Buffer.concat([Buffer.alloc(alignment), bytes]).toString('base64');
    // Characters before ceil(8·alignment / 6) hold bits of the leading bytes; the last full one ends at bit 8·total.
    forms.push(encoded.slice(Math.ceil((8 * alignment) / 6), Math.floor((8 * total) / 6)));
  }
  return forms.flatMap((form) => {
    const urlSafe = form.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
    return urlSafe === form ? [form] : [form, urlSafe];
  });
}

/** Adds a form whose prefixes of `minimum` characters or more are hidden (the whole form at least). */
function addForm(root: TrieNode, form: string, minimum: number): void {
  let node = root;
  for (let index = 0; index < form.length; index++) {
    const code = form.charCodeAt(index);
    let child = node.next.get(code);
    if (child === undefined) {
      child = { next: new Map(), terminal: false };
      node.next.set(code, child);
    }
    node = child;
    if (index + 1 >= minimum) node.terminal = true;
  }
}

/** Where the longest hidden form that starts at `start` ends (the finder found at least one there). */
function longestFormEnd(root: TrieNode, text: string, start: number): number {
  let node: TrieNode | undefined = root;
  let end = start;
  for (let index = start; index < text.length; index++) {
    node = node.next.get(text.charCodeAt(index));
    if (node === undefined) break;
    if (node.terminal) end = index + 1;
  }
  return end;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}
