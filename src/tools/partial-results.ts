import { z } from 'zod';

/**
 * Named intermediate results a run reports (`report_progress`'s `data`), kept in its result metadata as
 * `partial_results`. A model writes them, so each is bounded where it enters: the run record holds at most
 * `names` of them, each at most `valueChars` of JSON (40 KB in all).
 */
export const partialResultLimits = {
  /** Names one report may carry, and a run keeps. */
  names: 20,
  /** Characters of a name. */
  nameChars: 64,
  /** Characters of one value, as JSON. */
  valueChars: 2_000,
} as const;

const namePattern = /^[A-Za-z0-9_.-]+$/;

/** The `data` of one report: result names to JSON values, each bounded. */
export const partialResultsSchema = z
  .record(
    z.string(),
    z.json().refine((value) => JSON.stringify(value).length <= partialResultLimits.valueChars, {
      error: `a value is at most ${partialResultLimits.valueChars} characters as JSON; report less, or a summary`,
    }),
  )
  .superRefine((data, context) => {
    const names = Object.keys(data);
    if (names.length > partialResultLimits.names)
      context.addIssue({
        code: 'custom',
        message: `${names.length} names, more than the ${partialResultLimits.names} one report may carry`,
      });
    for (const name of names) {
      const problem =
        name.length > partialResultLimits.nameChars
          ? `a name has at most ${partialResultLimits.nameChars} characters`
          : namePattern.test(name)
            ? undefined
            : 'a name holds only letters, digits, "_", "." and "-"';
      if (problem) context.addIssue({ code: 'custom', path: [name], message: problem });
    }
  });
export type PartialResults = z.infer<typeof partialResultsSchema>;
