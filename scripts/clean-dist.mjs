// `npm run build` starts from an empty dist/: a module deleted from src/ must not live on in dist/ (and in
// the package's tarball) from an older build.
import { rmSync } from 'node:fs';
import { join } from 'node:path';

rmSync(join(import.meta.dirname, '../dist'), { recursive: true, force: true });
