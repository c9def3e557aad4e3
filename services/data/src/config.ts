import { z } from 'zod';

/** The data pillar's own settings (README's settings table), parsed once at start into `services.settings`. */
export const dataSettings = z.object({
  /** Where the slim, indexed vPIC database is kept (made by `pnpm build`, or at first start); default libs/vin/.cache/. */
  VPIC_DB_PATH: z.string().trim().min(1, 'expected a file path').optional(),
});
export type DataSettings = z.infer<typeof dataSettings>;

export const vpicDbPath = (settings: Readonly<Record<string, unknown>>) => (settings as DataSettings).VPIC_DB_PATH;
