export { describeIssues, formatPath } from './issues.js';
export { parseJsonRecord, parseRecord } from './parse.js';
