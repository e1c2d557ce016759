export type { ApiEngine } from './api-engine.js';
export { ApiError, toApiError, type WireErrorCode, wireErrorCodes } from './api-error.js';
export { type ApiServerOptions, createApiServer } from './create-api-server.js';
export { type AgentSummary, runnableSummaries } from './routes/agent-routes.js';
export { type ErrorBody, errorBodySchema, wireEventSchema } from './schemas.js';
