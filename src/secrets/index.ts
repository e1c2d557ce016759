export { createRedactor, type Redactor, redactedMark } from './redactor.js';
export { redactSecrets, redactSecretsIn, registerSecrets } from './secret-registry.js';
