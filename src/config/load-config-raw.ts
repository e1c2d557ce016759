import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Document, isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, visit } from 'yaml';
import { ConfigError } from './config-error.js';

/** The largest config text loadConfigRaw reads: far above any real config, well below what hurts an editor. */
export const maxRawConfigBytes = 4 * 1024 * 1024;

/** A place in the text: line and column from 1, offset from 0. */
export interface TextPosition {
  line: number;
  col: number;
  offset: number;
}

/** A `${NAME}`, `${NAME:-default}` or `$NAME` reference in a value, where it is and what it names. */
export interface RawEnvReference {
  /** The key path of the value holding it, as `document.getIn` takes it. */
  path: (string | number)[];
  name: string;
  /** Where the value starts. */
  position: TextPosition;
}

/**
 * A config file as written: the YAML document with `${VAR}` references kept as text, comments and layout
 * kept, and positions. Edit it with the `yaml` package's Document API (`document.setIn`, `deleteIn`,
 * `addIn`) and write `toString()` back: the references, comments and the rest stay as they were.
 */
export interface RawConfig {
  /** Absolute path of the file, or the source name of the text. */
  path: string;
  document: Document.Parsed;
  lineCounter: LineCounter;
  /** Where the value at this key path starts (its nearest existing ancestor's when absent; root: line 1). */
  positionOf(path: readonly (string | number)[]): TextPosition;
  /** Every environment variable reference in the values (not in comments), in the order of the text. */
  envReferences: RawEnvReference[];
  /** The document as text, with the edits made to it. */
  toString(): string;
}

/**
 * Reads a config file for a tool that edits it: no `${VAR}` expansion, no .env files, no schema check (an
 * edited config may be incomplete; check it with loadConfig or parseConfigText), no secret registered.
 * Throws ConfigError for a file that cannot be read, is over maxRawConfigBytes, or is not valid YAML.
 */
export function loadConfigRaw(path: string): RawConfig {
  const absolutePath = resolve(path);
  let text: string;
  try {
    const { size } = statSync(absolutePath);
    if (size > maxRawConfigBytes) {
      throw new ConfigError(path, [`the file is ${size} bytes, over the limit of ${maxRawConfigBytes}`]);
    }
    text = readFileSync(absolutePath, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(path, [`cannot read the file: ${(error as Error).message}`], { cause: error });
  }
  return { ...parseConfigRaw(text, { sourceName: path }), path: absolutePath };
}

/** loadConfigRaw without the file: the text of a config. */
export function parseConfigRaw(text: string, options: { sourceName?: string } = {}): RawConfig {
  const sourceName = options.sourceName ?? '<config>';
  if (Buffer.byteLength(text) > maxRawConfigBytes) {
    throw new ConfigError(sourceName, [`the text is over the limit of ${maxRawConfigBytes} bytes`]);
  }
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, keepSourceTokens: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      sourceName,
      document.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return `line ${line}, column ${col}: ${error.message}`;
      }),
    );
  }
  const positionAt = (offset: number): TextPosition => ({ ...lineCounter.linePos(offset), offset });
  return {
    path: sourceName,
    document,
    lineCounter,
    positionOf(path) {
      for (let length = path.length; length > 0; length--) {
        const node: unknown = document.getIn(path.slice(0, length), true);
        if (isNode(node) && node.range) return positionAt(node.range[0]);
      }
      return positionAt(0);
    },
    envReferences: envReferencesIn(document, positionAt),
    toString: () => document.toString(),
  };
}

/** `$$` (a literal `$`, skipped), `${NAME}`, `${NAME:-default}` and `$NAME`: what loadConfig expands. */
const referencePattern = /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}\n]*)?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

function envReferencesIn(
  document: Document.Parsed,
  positionAt: (offset: number) => TextPosition,
): RawEnvReference[] {
  const references: RawEnvReference[] = [];
  visit(document, {
    Scalar(key, node, ancestors) {
      if (key === 'key' || !isScalar(node) || typeof node.value !== 'string' || !node.range) return;
      const path = keyPathOf(ancestors, node);
      for (const match of node.value.matchAll(referencePattern)) {
        const name = match[1] ?? match[2];
        if (name !== undefined) references.push({ path, name, position: positionAt(node.range[0]) });
      }
    },
  });
  return references;
}

/** The key path of `node` from the visitor's ancestors (document, maps, pairs, sequences). */
function keyPathOf(ancestors: readonly unknown[], node: unknown): (string | number)[] {
  const path: (string | number)[] = [];
  const chain = [...ancestors, node];
  chain.forEach((parent, index) => {
    const child = chain[index + 1];
    if (child === undefined) return;
    if (isPair(parent)) {
      const key = isScalar(parent.key) ? parent.key.value : parent.key;
      if (typeof key === 'string' || typeof key === 'number') path.push(key);
    } else if (isSeq(parent)) {
      path.push(parent.items.indexOf(child as never));
    }
  });
  return path;
}
