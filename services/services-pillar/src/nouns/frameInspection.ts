import type { frameInspection } from '@vcs/contract';
import { ok, type HandlerTools, type NounHandlers } from '@vcs/platform';
import { Seeded, sandboxDate, stableId, vehicleFacts } from '@vcs/sandbox';
import { triggerOf, vinOf } from './sandboxInput.ts';

/** Factory tolerance for frame datum points, millimetres (the common ±3 mm published by frame-measuring makers). */
export const FRAME_TOLERANCE_MM = 3;
const AREAS = [
  'front-left-rail',
  'front-right-rail',
  'left-rocker',
  'right-rocker',
  'rear-left-rail',
  'rear-right-rail',
  'cross-member',
] as const;

/** The grade follows the worst deviation: A within tolerance, D structural. */
export function gradeOf(maxDeviationMm: number): string {
  if (maxDeviationMm <= FRAME_TOLERANCE_MM) return 'A';
  if (maxDeviationMm <= 6) return 'B';
  if (maxDeviationMm <= 10) return 'C';
  return 'D';
}

// One inspection per VIN: its id, inspector and findings are the same in every answer; only the status moves.
function inspectionOf(vin: string) {
  const s = new Seeded(vin, 'frameInspection');
  const count = s.int(0, 3);
  const start = s.int(0, AREAS.length - 1);
  const areas = Array.from({ length: count }, (_, k) => AREAS[(start + k) % AREAS.length]!);
  const damages = areas.map((area) => {
    const deviationMm = s.int(1, 14);
    return {
      area,
      severity: deviationMm <= FRAME_TOLERANCE_MM ? 'minor' : deviationMm <= 10 ? 'moderate' : 'severe',
      deviationMm,
      withinTolerance: deviationMm <= FRAME_TOLERANCE_MM,
    };
  });
  const photos = ['underbody-front', 'underbody-rear', 'left-side', 'right-side'].map((view) => ({
    id: stableId('pho_', vin, `frame|${view}`),
    view,
    takenOn: sandboxDate(4),
  }));
  return {
    record: {
      vin,
      noun: 'frameInspection',
      asOf: sandboxDate(),
      id: stableId('insp_', vin),
      type: 'frame-measurement',
      location: s.pick(['mobile', 'body-shop', 'dealer-service-bay']),
      inspectorId: stableId('ins_', vin, 'frame-inspector'),
    },
    grade: gradeOf(Math.max(0, ...damages.map((d) => d.deviationMm))),
    damages,
    photos,
  };
}

/** Before measurement an inspection has no findings; from measurement on it carries them. */
function answer(vin: string, status: string, measured: boolean) {
  const i = inspectionOf(vin);
  return measured
    ? { ...i.record, grade: i.grade, damages: i.damages, photos: i.photos, status }
    : { ...i.record, grade: 'pending', damages: [], photos: [], status };
}

/**
 * Reads report what is on file; a VIN with nothing on file (or the trigger) answers no-inspection-on-file, with no
 * event.
 */
function read(input: { vin?: string }, tools: HandlerTools, status: string, measured: boolean) {
  const vin = vinOf(input);
  if (!vehicleFacts(vin).onFile || triggerOf(tools) === 'nothing-on-file')
    return ok(answer(vin, 'no-inspection-on-file', false), { events: [] });
  return ok(answer(vin, status, measured));
}
const act = (status: string, measured: boolean) => async (input: { vin?: string }) =>
  ok(answer(vinOf(input), status, measured));

export const frameInspectionHandlers: NounHandlers<typeof frameInspection> = {
  status: async (input, tools) => read(input, tools, 'scheduled', false),
  result: async (input, tools) => read(input, tools, 'completed', true),
  tolerance: async (input, tools) => read(input, tools, 'completed', true),
  order: act('ordered', false),
  schedule: act('scheduled', false),
  pay: act('paid', false),
  measure: act('measured', true),
  perform: act('performed', true),
  complete: act('completed', true),
};
