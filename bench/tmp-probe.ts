import { measureTakeover } from './takeover.js';

for (let i = 0; i < 4; i += 1) {
  const t = await measureTakeover('redis://127.0.0.1:6379');
  console.log(JSON.stringify(t));
}
