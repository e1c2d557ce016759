import { pathToFileURL } from 'node:url';
import type { Extensions } from '../extensions/index.js';
import type { ToolBox } from '../tools/index.js';
import type { Ledger } from './ledger.js';

/** What a test worker module is given when a worker (in this process or a child process) starts. */
export interface TestWorkerContext {
  /** The side-effect ledger of the test engine the worker serves. */
  ledger: Ledger;
}

/** What a test worker runs besides Ratchet's built-ins: your own toolboxes and extensions. */
export interface TestWorkerSetup {
  toolboxes?: readonly ToolBox[];
  /** Effects, middleware, coordinators and stop conditions of your own (docs/extending.md). */
  extensions?: Extensions;
}

/** The default export of a test worker module. */
export type TestWorkerFactory = (context: TestWorkerContext) => TestWorkerSetup | Promise<TestWorkerSetup>;

/**
 * Declares a test worker module: the default export of a file that a crash test's worker processes import
 * to get your toolboxes and extensions. It is called once in each worker with the test's ledger, so your tools can record
 * their side effects in it:
 *
 * ```ts
 * export default defineTestWorker(({ ledger }) => ({ toolboxes: [paymentsToolbox(fakePayments(ledger))] }));
 * ```
 */
export function defineTestWorker(factory: TestWorkerFactory): TestWorkerFactory {
  return factory;
}

/** A module path or URL as an import specifier (a relative path resolves against the working directory). */
export function moduleSpecifier(module: string | URL): string {
  if (module instanceof URL) return module.href;
  return /^[a-z][a-z0-9+.-]*:/i.test(module) && !/^[a-z]:[\\/]/i.test(module)
    ? module
    : pathToFileURL(module).href;
}

/** Imports a test worker module and runs its factory; no module: no toolboxes of your own. */
export async function loadTestWorker(
  module: string | URL | undefined,
  context: TestWorkerContext,
): Promise<TestWorkerSetup> {
  if (module === undefined) return {};
  const specifier = moduleSpecifier(module);
  const imported = (await import(specifier)) as { default?: unknown };
  if (typeof imported.default !== 'function') {
    throw new Error(
      `test worker module ${specifier} has no default export made with defineTestWorker (a function)`,
    );
  }
  return (imported.default as TestWorkerFactory)(context);
}
