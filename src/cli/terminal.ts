import { clearLine, createInterface, cursorTo, type Interface } from 'node:readline';

export interface TerminalOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /**
   * A person at a keyboard (stdin is a TTY): prompts are shown with line editing, lines typed while no
   * question is open are dropped, and Ctrl-C is reported to `onInterrupt` instead of killing the process.
   * Otherwise lines are read from the pipe in order and kept until a question takes them.
   */
  interactive: boolean;
}

/**
 * Text as it may reach a terminal: what a model wrote (answers, tool results, questions, sub-goal titles) is
 * an attacker's text, and an escape sequence in it could retitle the window, rewrite the screen or forge a
 * link. Control characters other than newline and tab become visible symbols (ESC shows as ␛), and so do
 * the bidirectional overrides that make text read differently from what it is.
 */
export function printable(text: string): string {
  return text.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it removes.
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (char) => {
      const code = char.charCodeAt(0);
      if (code < 0x20) return String.fromCharCode(0x2400 + code);
      if (code === 0x7f) return '\u2421';
      return '\ufffd';
    },
  );
}

/**
 * Lines on the terminal: printed output, and answers read from stdin. One prompt at a time; event lines
 * printed while a prompt is open go above it (the prompt and what was typed so far are redrawn).
 */
export class Terminal {
  readonly interactive: boolean;
  private readonly readline: Interface;
  private readonly output: NodeJS.WritableStream;
  private readonly buffered: string[] = [];
  private waiter: { resolve: (line: string | undefined) => void } | undefined;
  private ended = false;
  private interruptHandler: (() => void) | undefined;

  constructor(options: TerminalOptions) {
    this.interactive = options.interactive;
    this.output = options.output;
    this.readline = createInterface({
      input: options.input,
      ...(options.interactive ? { output: options.output } : {}),
      terminal: options.interactive,
    });
    this.readline.on('line', (line) => {
      const waiter = this.waiter;
      if (waiter) {
        this.waiter = undefined;
        if (!this.interactive) this.output.write(`${line}\n`);
        waiter.resolve(line);
      } else if (!this.interactive) {
        this.buffered.push(line);
      }
    });
    this.readline.on('close', () => {
      this.ended = true;
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) {
        this.output.write('\n');
        waiter.resolve(undefined);
      }
    });
    // In raw mode Ctrl-C reaches readline, not the process.
    this.readline.on('SIGINT', () => this.interruptHandler?.());
  }

  /** Called on Ctrl-C typed at the terminal (the process's SIGINT is the caller's to handle). */
  onInterrupt(handler: () => void): void {
    this.interruptHandler = handler;
  }

  /** Whether stdin has ended (every later question gets its default answer). */
  get atEnd(): boolean {
    return this.ended && this.buffered.length === 0;
  }

  print(text: string): void {
    const line = printable(text);
    if (this.interactive && this.waiter) {
      clearLine(this.output, 0);
      cursorTo(this.output, 0);
      this.output.write(`${line}\n`);
      this.readline.prompt(true);
      return;
    }
    this.output.write(`${line}\n`);
  }

  /**
   * Shows the prompt and resolves with the next line, or undefined when stdin has ended. Rejects with the
   * signal's reason when it is aborted first.
   */
  ask(question: string, signal?: AbortSignal): Promise<string | undefined> {
    const prompt = printable(question);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.waiter) return Promise.reject(new Error('a prompt is already open'));
    if (!this.interactive) {
      const line = this.buffered.shift();
      if (line !== undefined) {
        this.output.write(`${prompt}${line}\n`);
        return Promise.resolve(line);
      }
      if (this.ended) return Promise.resolve(undefined);
      this.output.write(prompt);
    } else {
      if (this.ended) return Promise.resolve(undefined);
      this.readline.setPrompt(prompt);
      this.readline.prompt();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (line: string | undefined) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(line);
        },
      };
      const onAbort = () => {
        if (this.waiter !== waiter) return;
        this.waiter = undefined;
        if (this.interactive) {
          // Drop what was typed so far; the next prompt starts on a fresh line.
          this.readline.write(null, { ctrl: true, name: 'u' });
          clearLine(this.output, 0);
          cursorTo(this.output, 0);
        } else {
          this.output.write('\n');
        }
        reject(signal?.reason);
      };
      this.waiter = waiter;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): void {
    this.readline.close();
  }
}
