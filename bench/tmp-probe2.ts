import { Worker } from 'bullmq';

const worker = new Worker('probe', async () => {}, {
  connection: { url: 'redis://127.0.0.1:6379' },
  prefix: 'bench-probe',
  stalledInterval: 1000,
});
await new Promise((r) => setTimeout(r, 10_500));
await worker.close();
