// Copies the Lua scripts next to the compiled JavaScript (tsc copies only .ts output).
import { cpSync } from 'node:fs';

cpSync('src/redis/lua', 'dist/redis/lua', { recursive: true });
