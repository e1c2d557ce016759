export { createHttpServer } from './http-server.js';
