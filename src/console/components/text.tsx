import type { ComponentChildren } from 'preact';

// What models, tools and users wrote is attacker input (DESIGN rule 13): it is rendered as text nodes only,
// never as HTML; a link is made only of a URL whose protocol is http: or https:; and the characters that
// reorder text (bidi overrides and isolates) are shown escaped, so a name cannot read backwards on screen.

const bidiControls = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text with each bidi control character written as its escape (`\u202E`). */
export function visibleText(text: string): string {
  return text.replace(
    bidiControls,
    (character) => `\\u${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}

/** A URL we would link to: it parses, and its protocol is http: or https:. */
export function safeHttpUrl(candidate: string): string | undefined {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

/** Model, tool or user text as text. */
export function Text({ value }: { value: string }) {
  return <>{visibleText(value)}</>;
}

/** A link when `href` is an http(s) URL; otherwise the text alone. */
export function SafeLink({ href, children }: { href: string; children?: string }) {
  const url = safeHttpUrl(href);
  const label = visibleText(children ?? href);
  if (url === undefined) return <>{label}</>;
  return (
    <a href={url} rel="noopener noreferrer nofollow" target="_blank">
      {label}
    </a>
  );
}

const urlPattern = /https?:\/\/[^\s<>"'`]+/g;

/** Model text with its http(s) URLs made links (anything else, `javascript:` included, stays text). */
export function ModelText({ value }: { value: string }) {
  const pieces: ComponentChildren[] = [];
  let last = 0;
  for (const match of value.matchAll(urlPattern)) {
    const url = match[0].replace(/[.,;:!?)\]]+$/, '');
    const at = match.index;
    if (at > last) pieces.push(visibleText(value.slice(last, at)));
    pieces.push(<SafeLink key={at} href={url} />);
    last = at + url.length;
  }
  if (last < value.length) pieces.push(visibleText(value.slice(last)));
  return <span class="model-text">{pieces}</span>;
}
