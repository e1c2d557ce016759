import { type DestinationStream, pino } from 'pino';
import { isColorSupported, prettyFactory } from 'pino-pretty';

export interface TerminalLogOptions {
  /**
   * Where lines go: a file descriptor (written synchronously, so log lines keep their place among the CLI's
   * own lines) or a stream.
   */
  destination: 1 | 2 | NodeJS.WritableStream;
  /** Colour the level (only when the destination is a terminal that shows colours). */
  colorize: boolean;
  /**
   * How long repeats of a line are held back once it is printed: the first repeat after that is printed,
   * saying how many were held back.
   */
  repeatWindowMs?: number;
  now?: () => number;
}

/** How many different lines the repeat filter remembers (older ones are forgotten first). */
const maxRemembered = 500;
/** A line's text past this is cut (a provider's error page, a long model message). */
const maxLineLength = 400;
/** Fields the line's head shows, or a reader at a terminal does not need. */
const headFields = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'err']);

/**
 * A log destination for a person at a terminal: each line is `time LEVEL message: error (context)`, with no
 * stack trace and no multi-line object; a line repeating one printed within `repeatWindowMs` (same level,
 * message and error) is held back, so a fault that lasts prints one line, not one per retry.
 */
export function terminalLogStream(options: TerminalLogOptions): DestinationStream {
  const windowMs = options.repeatWindowMs ?? 30_000;
  const now = options.now ?? Date.now;
  const format = prettyFactory({
    colorize: options.colorize,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,name',
    // Errors are objects like any other here: hidden, and summarised by the message format.
    errorLikeObjectKeys: [],
    hideObject: true,
    singleLine: true,
    messageFormat: (record, messageKey) => describe(record, messageKey),
  });
  const write: (text: string) => void =
    typeof options.destination === 'number'
      ? (() => {
          const sink = pino.destination({ fd: options.destination, sync: true });
          return (text: string) => sink.write(text);
        })()
      : (() => {
          const stream = options.destination;
          return (text: string) => stream.write(text);
        })();
  const printed = new Map<string, { at: number; heldBack: number }>();
  return {
    write(line: string) {
      const record = JSON.parse(line) as Record<string, unknown>;
      const key = `${String(record.level)}\u0000${String(record.msg)}\u0000${errorText(record.err) ?? ''}`;
      const at = now();
      const last = printed.get(key);
      if (last && at - last.at < windowMs) {
        last.heldBack += 1;
        return;
      }
      if (last && last.heldBack > 0) {
        record.msg = `${String(record.msg)} [${last.heldBack} more like this in the last ${Math.round((at - last.at) / 1000)} s]`;
      }
      printed.delete(key);
      printed.set(key, { at, heldBack: 0 });
      if (printed.size > maxRemembered) printed.delete(printed.keys().next().value as string);
      const text = format(record);
      write(text.endsWith('\n') ? text : `${text}\n`);
    },
  };
}

/** Whether pretty lines at this destination may carry colours. */
export function colorsAt(toTerminal: boolean): boolean {
  return toTerminal && isColorSupported;
}

function describe(record: Record<string, unknown>, messageKey: string): string {
  const error = errorText(record.err);
  const message = `${oneLine(String(record[messageKey] ?? ''))}${error === undefined ? '' : `: ${error}`}`;
  const context = Object.entries(record)
    .filter(
      ([key, value]) => !headFields.has(key) && key !== messageKey && value !== undefined && value !== null,
    )
    .map(([key, value]) => [key, oneLine(typeof value === 'string' ? value : JSON.stringify(value))] as const)
    // A field the line already says (the error of "Redis is unreachable (…)", an error's code) is not said twice.
    .filter(([, value]) => !message.includes(value))
    .map(([key, value]) => `${key}=${oneLine(value, 80)}`);
  return oneLine(`${message}${context.length > 0 ? ` (${context.join(', ')})` : ''}`, maxLineLength);
}

/** An error's code and message on one line (the stack stays in the JSON format). */
function errorText(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return error === undefined ? undefined : String(error);
  const { message, code } = error as { message?: unknown; code?: unknown };
  const text = oneLine(typeof message === 'string' ? message : JSON.stringify(error));
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

function oneLine(text: string, length = maxLineLength): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}
