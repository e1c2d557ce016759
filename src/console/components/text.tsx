import { safeHttpUrl, textAndLinks, visibleText } from '../safe-text.js';

export { safeHttpUrl, visibleText };

/** Model, tool or user text as text (bidi controls shown escaped). */
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

/** Model text with its http(s) URLs made links; everything else, `javascript:` included, stays text. */
export function ModelText({ value }: { value: string }) {
  return (
    <span class="model-text">
      {textAndLinks(value).map((piece, index) =>
        'url' in piece ? <SafeLink key={index} href={piece.url} /> : visibleText(piece.text),
      )}
    </span>
  );
}
