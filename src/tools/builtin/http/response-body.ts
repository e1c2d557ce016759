/** How a response body reaches the model: as text, or base64 when the bytes are not text. */
export type ResponseBody = { body: string } | { body_base64: string };

const textualTypes = [
  /^text\//,
  /^application\/(json|xml|javascript|ecmascript|x-www-form-urlencoded|yaml|x-yaml|toml|graphql|sql|x-ndjson)$/,
  /^application\/[\w.-]+\+(json|xml|yaml)$/,
  /^image\/svg\+xml$/,
];

/**
 * Decodes a response body by its content type: textual types as text in their declared charset (UTF-8
 * when none is declared or the label is unknown), other types as base64. Without a content type, bytes
 * that are valid UTF-8 are text. A body cut mid-character (`truncated`) may end in a replacement character.
 */
export function decodeResponseBody(contentType: string | undefined, bytes: Buffer): ResponseBody {
  if (contentType === undefined || contentType.trim() === '') {
    try {
      return { body: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
    } catch {
      return { body_base64: bytes.toString('base64') };
    }
  }
  const [mediaType = '', ...parameters] = contentType.split(';').map((part) => part.trim());
  if (!textualTypes.some((pattern) => pattern.test(mediaType.toLowerCase()))) {
    return { body_base64: bytes.toString('base64') };
  }
  return { body: decoderFor(charsetOf(parameters)).decode(bytes) };
}

function charsetOf(parameters: readonly string[]): string {
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=');
    if (name?.trim().toLowerCase() === 'charset' && value) return value.trim().replace(/^"|"$/g, '');
  }
  return 'utf-8';
}

function decoderFor(charset: string) {
  try {
    return new TextDecoder(charset);
  } catch {
    return new TextDecoder('utf-8');
  }
}
