export { type ErrorCode, errorCodes } from './codes.js';
export { RatchetError, type RatchetErrorOptions, toRatchetError } from './ratchet-error.js';
