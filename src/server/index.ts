export { createHttpServer, type HttpServerOptions } from './http-server.js';
