import { z } from 'zod';
import { defineNoun, type CapabilitySpec } from '../capability.ts';
import { isoDate } from '../answer.ts';
import { price, valueBase, vinOptional } from '../common.ts';
import { nothingOnFile } from './onFile.ts';

/** The Inspection record: every frameInspection answer's value (plus vin, noun, asOf). */
export const inspectionValue = valueBase.extend({
  id: z.string().meta({ description: 'Inspection id, one per VIN', example: 'insp_5e1f0a9b2c3d' }),
  type: z.string().meta({ description: 'Inspection type', example: 'frame-measurement' }),
  location: z.string().meta({ description: 'Where the inspection takes place', example: 'mobile' }),
  inspectorId: z.string().meta({ description: 'The assigned inspector', example: 'ins_7a8b9c0d1e2f' }),
  grade: z.string().meta({
    description: 'Frame grade: A (within tolerance) to D (structural damage); pending before measurement',
    example: 'A',
  }),
  damages: z
    .array(
      z.object({
        area: z.string().meta({ description: 'Frame area', example: 'front-left-rail' }),
        severity: z.string().meta({ description: 'minor, moderate or severe', example: 'minor' }),
        deviationMm: z.number().meta({ description: 'Measured deviation from factory datum, millimetres', example: 4 }),
        withinTolerance: z
          .boolean()
          .meta({ description: 'Whether the deviation is within the tolerance', example: true }),
      }),
    )
    .meta({ description: 'Damage findings by frame area' }),
  photos: z
    .array(
      z.object({
        id: z.string().meta({ description: 'Photo id', example: 'pho_1a2b3c4d5e6f' }),
        view: z.string().meta({ description: 'What the photo shows', example: 'underbody-front' }),
        takenOn: isoDate,
      }),
    )
    .meta({ description: 'Photos taken during the inspection' }),
  status: z.string().meta({ description: 'Inspection status', example: 'scheduled' }),
});

const noInspection = [nothingOnFile('no-inspection-on-file')];

/** Every capability takes an optional vin and answers the Inspection record. */
function cap(spec: Omit<CapabilitySpec<typeof vinOptional, typeof inspectionValue>, 'request' | 'value' | 'mode'>) {
  return { ...spec, mode: 'sandbox' as const, request: vinOptional, value: inspectionValue };
}

export const frameInspection = defineNoun({
  noun: 'frameInspection',
  pillar: 'services',
  displayPillar: 'Services',
  entity: 'Inspection',
  door: 'frame-inspections',
  summary: "Frame inspections: order, schedule, measure and grade a vehicle's frame against factory tolerances.",
  capabilities: {
    status: cap({
      method: 'GET',
      path: '/frame-inspections/status',
      gate: 'none',
      facet: 'data',
      summary: 'The frame inspection on file for a VIN.',
      answer: 'FrameInspectionStatus@1',
      events: [],
      price: price.free(),
      triggers: noInspection,
    }),
    result: cap({
      method: 'GET',
      path: '/frame-inspections/result',
      gate: 'key',
      facet: 'data',
      summary: 'The graded result of the inspection.',
      answer: 'FrameInspectionResult@1',
      events: [{ type: 'FrameInspection.resulted@1', when: 'success' }],
      price: price.free(),
      triggers: noInspection,
    }),
    measure: cap({
      method: 'POST',
      path: '/frame-inspections/measure',
      gate: 'offer',
      facet: 'services',
      summary: 'Measure the frame against the factory datum points.',
      answer: 'FrameInspectionMeasure@1',
      events: [
        { type: 'FrameInspection.measureRequested@1', when: 'run' },
        { type: 'FrameInspection.measured@1', when: 'success' },
      ],
      price: price.takeRate('0.08', 'the measurement fee', '12.00', '30.00'),
    }),
    order: cap({
      method: 'POST',
      path: '/frame-inspections/order',
      gate: 'offer',
      facet: 'commerce',
      summary: 'Order a frame inspection: dispatched, performed and settled as one service order.',
      answer: 'FrameInspectionOrder@1',
      events: [
        { type: 'FrameInspection.ordered@1', when: 'run' },
        { type: 'FrameInspection.dispatched@1', when: 'success' },
        { type: 'FrameInspection.completed@1', when: 'success' },
        { type: 'ServiceOrder.settled@1', when: 'success' },
      ],
      price: price.flat('15.00'),
    }),
    schedule: cap({
      method: 'POST',
      path: '/frame-inspections/schedule',
      gate: 'offer',
      facet: 'services',
      summary: 'Schedule the inspection with an inspector.',
      answer: 'FrameInspectionSchedule@1',
      events: [
        { type: 'FrameInspection.scheduleRequested@1', when: 'run' },
        { type: 'FrameInspection.scheduled@1', when: 'success' },
      ],
      price: price.takeRate('0.05', 'the inspection fee', '7.50', '15.00'),
    }),
    pay: cap({
      failureCode: 'payment-failed',
      method: 'POST',
      path: '/frame-inspections/pay',
      gate: 'offer',
      facet: 'commerce',
      summary: 'Pay for the inspection.',
      answer: 'FrameInspectionPay@1',
      events: [
        { type: 'FrameInspection.payRequested@1', when: 'run' },
        { type: 'FrameInspection.paid@1', when: 'success' },
        { type: 'FrameInspection.payFailed@1', when: 'failure' },
      ],
      price: price.takeRate('0.029', 'the amount paid', '4.35', '10.00'),
    }),
    perform: cap({
      method: 'POST',
      path: '/frame-inspections/perform',
      gate: 'offer',
      facet: 'services',
      summary: 'Perform the inspection on site.',
      answer: 'FrameInspectionPerform@1',
      events: [
        { type: 'FrameInspection.performRequested@1', when: 'run' },
        { type: 'FrameInspection.performed@1', when: 'success' },
        { type: 'FrameInspection.performFailed@1', when: 'failure' },
      ],
      price: price.takeRate('0.1', "the inspector's fee", '15.00', '40.00'),
    }),
    complete: cap({
      method: 'POST',
      path: '/frame-inspections/complete',
      gate: 'offer',
      facet: 'services',
      summary: 'Complete the inspection and file its report.',
      answer: 'FrameInspectionComplete@1',
      events: [
        { type: 'FrameInspection.completeRequested@1', when: 'run' },
        { type: 'FrameInspection.completed@1', when: 'success' },
      ],
      price: price.takeRate('0.05', 'the inspection fee', '7.50', '15.00'),
    }),
    tolerance: cap({
      method: 'GET',
      path: '/frame-inspections/tolerance',
      gate: 'key',
      facet: 'data',
      summary: "Each measured deviation against the manufacturer's tolerance.",
      answer: 'FrameInspectionTolerance@1',
      events: [{ type: 'FrameInspection.toleranced@1', when: 'success' }],
      price: price.free(),
      triggers: noInspection,
    }),
  },
});
