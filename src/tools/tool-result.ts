import type { JsonValue } from './json-value.js';

/** An image a tool returns to the model: inline base64 bytes with their media type. */
export interface ToolImage {
  /** Base64 of the image's bytes. */
  data: string;
  /** e.g. `image/png`. */
  media_type: string;
}

const imagesKey: unique symbol = Symbol('ratchet.toolImages');

/**
 * What a handler returns to give the model images beside its output (see withImages). A symbol marks it,
 * so no JSON value a tool returns can be taken for it.
 */
export interface ToolOutputWithImages {
  readonly [imagesKey]: readonly ToolImage[];
  readonly output: string | JsonValue;
}

/** Everything a handler may return. */
export type ToolOutput = string | JsonValue | ToolOutputWithImages;

/**
 * A handler's result with images: the model gets `output` as the result's text and the images as image
 * parts of the same tool result (providers that take images in tool results send them there; see
 * docs/tools.md).
 */
export function withImages(output: string | JsonValue, images: readonly ToolImage[]): ToolOutputWithImages {
  return { [imagesKey]: images, output };
}

/** What a tool call produced, as the model will see it. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
  /** Images of the result (a browser screenshot), in order. */
  images?: readonly ToolImage[];
}

/** A handler's output as the text and images of an outcome. */
export function splitToolOutput(output: ToolOutput | undefined): {
  text: string;
  images: readonly ToolImage[];
} {
  if (typeof output === 'object' && output !== null && imagesKey in output) {
    return { text: renderToolOutput(output.output), images: output[imagesKey] };
  }
  return { text: renderToolOutput(output as string | JsonValue | undefined), images: [] };
}

export function renderToolOutput(output: string | JsonValue | undefined): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  return JSON.stringify(output);
}
