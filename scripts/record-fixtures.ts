// npm run fixtures:record: runs the record scenarios against redis-servers of their own and writes what
// they leave in Redis to test/fixtures/records/<package version>/ (test/helpers/records/).
import { recordFixtures } from '../test/helpers/records/record-fixtures.js';

const folder = await recordFixtures({ say: (line) => process.stdout.write(`${line}\n`) });
process.stdout.write(`wrote ${folder}\n`);
