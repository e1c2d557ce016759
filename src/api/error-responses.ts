import { errorBodySchema } from '../wire/index.js';

/** The error responses a route documents, all of the one shape. */
export function errorResponses<Status extends number>(
  ...statuses: Status[]
): Record<Status, typeof errorBodySchema> {
  return Object.fromEntries(statuses.map((status) => [status, errorBodySchema])) as Record<
    Status,
    typeof errorBodySchema
  >;
}
