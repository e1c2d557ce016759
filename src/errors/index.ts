export { type ErrorCode, errorCodes } from './codes.js';
export {
  RatchetError,
  type RatchetErrorOptions,
  toRatchetError,
  withoutSecrets,
} from './ratchet-error.js';
export { Suspension } from './suspension.js';
export { untilAborted } from './until-aborted.js';
