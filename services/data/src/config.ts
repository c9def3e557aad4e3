import { z } from 'zod';
import type { SettingsOf } from '@vcs/platform';

/** The data pillar's own settings (README's settings table), parsed once at start into `services.settings`. */
export const dataSettings = z.object({
  /**
   * Where the slim, indexed vPIC database is kept (made by `pnpm build`, or at first start); default libs/vin/.cache/.
   */
  VPIC_DB_PATH: z.string().trim().min(1, 'expected a file path').optional(),
});
/** What the data pillar's code reads: the base settings and its own. */
export type DataSettings = SettingsOf<typeof dataSettings>;
