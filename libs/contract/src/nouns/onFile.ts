import type { Trigger } from '../capability.ts';

/** For capabilities that report a record: force the "nothing on file" answer (OK with the spec's status string). */
export const nothingOnFile = (status: string): Trigger => ({
  name: 'nothing-on-file',
  forces: 'OK',
  description: `Answer OK as for a VIN with nothing on file: the status reads ${status} and no event is emitted.`,
});
