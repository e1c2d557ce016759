import { z } from 'zod';
import { registerProvider } from '../../src/models/provider-registry.js';

/** A provider kind for config tests, so they do not depend on any real kind. */
registerProvider('fake', {
  fieldsSchema: z.strictObject({ temperature: z.number().optional() }),
  create: () => {
    throw new Error('unused');
  },
});
