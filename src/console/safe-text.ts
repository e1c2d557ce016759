// What models, tools and users wrote is attacker input (DESIGN rule 13). The console renders it as text nodes
// only, never as HTML; these two functions decide the rest: which characters are shown escaped, and which
// URLs may become links.

/** Characters that reorder text on screen: bidi embeddings and overrides, isolates, and directional marks. */
const bidiControls = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text with each bidi control character written as its escape (`\u202E`), so nothing reads backwards. */
export function visibleText(text: string): string {
  return text.replace(
    bidiControls,
    (character) => `\\u${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}

/** The URL to link to when `candidate` parses with protocol http: or https:; otherwise undefined. */
export function safeHttpUrl(candidate: string): string | undefined {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

// A backslash ends a URL too: in JSON text (tool arguments and results) a quote after a URL is written \".
const urlPattern = /https?:\/\/[^\s<>"'`\\]+/g;

/**
 * Model text cut into plain text and the http(s) URLs in it (trailing punctuation left out of a URL), for
 * the view to render as text nodes and links. Anything else, `javascript:` included, stays text.
 */
export function textAndLinks(value: string): Array<{ text: string } | { url: string }> {
  const pieces: Array<{ text: string } | { url: string }> = [];
  let last = 0;
  for (const match of value.matchAll(urlPattern)) {
    const found = match[0].replace(/[.,;:!?)\]]+$/, '');
    const url = safeHttpUrl(found);
    if (url === undefined) continue;
    if (match.index > last) pieces.push({ text: value.slice(last, match.index) });
    pieces.push({ url: found });
    last = match.index + found.length;
  }
  if (last < value.length) pieces.push({ text: value.slice(last) });
  return pieces;
}
