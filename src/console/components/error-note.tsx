import { RatchetApiError } from '../../client/index.js';
import { visibleText } from './text.js';

/** What went wrong, in words: the API's code and message, or the error's message. */
export function describeError(error: unknown): string {
  if (error instanceof RatchetApiError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A failed call, shown where its data would be. */
export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined) return null;
  return (
    <p class="error" role="alert">
      {visibleText(describeError(error))}
    </p>
  );
}
