/**
 * The first `limit` characters of `text` and a note of how much was cut, or `text` itself when it fits
 * (or when the note would be longer than what it saves).
 */
export function clipText(text: string, limit: number, what: string): string {
  const note = `\n[… ${text.length - limit} more characters of this ${what} left out]`;
  if (text.length <= limit + note.length) return text;
  return `${text.slice(0, limit)}${note}`;
}
