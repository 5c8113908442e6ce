/**
 * The part of TensorFlow's `Event` protobuf (tensorflow/core/util/event.proto, framework/summary.proto, tensor.proto,
 * tensor_shape.proto) that scalars need, declared from the public field numbers and decoded with protobufjs.
 * Fields not declared here (graph_def, histo, image, audio, …) are skipped by the decoder as unknown fields.
 */
import * as protobuf from 'protobufjs/light';

/** TensorFlow's `DataType` values used here. */
export const DT_FLOAT = 1;
export const DT_DOUBLE = 2;

const root = protobuf.Root.fromJSON({
  nested: {
    tensorflow: {
      nested: {
        Event: {
          oneofs: { what: { oneof: ['fileVersion', 'summary', 'sessionLog'] } },
          fields: {
            wallTime: { type: 'double', id: 1 },
            step: { type: 'int64', id: 2 },
            fileVersion: { type: 'string', id: 3 },
            summary: { type: 'Summary', id: 5 },
            sessionLog: { type: 'SessionLog', id: 7 },
          },
        },
        SessionLog: {
          fields: { status: { type: 'int32', id: 1 } },
        },
        Summary: {
          fields: { value: { rule: 'repeated', type: 'SummaryValue', id: 1 } },
        },
        SummaryValue: {
          oneofs: { value: { oneof: ['simpleValue', 'tensor'] } },
          fields: {
            tag: { type: 'string', id: 1 },
            simpleValue: { type: 'float', id: 2 },
            tensor: { type: 'TensorProto', id: 8 },
            metadata: { type: 'SummaryMetadata', id: 9 },
          },
        },
        SummaryMetadata: {
          fields: {
            pluginData: { type: 'PluginData', id: 1 },
            displayName: { type: 'string', id: 2 },
            dataClass: { type: 'int32', id: 4 },
          },
        },
        PluginData: {
          fields: { pluginName: { type: 'string', id: 1 }, content: { type: 'bytes', id: 2 } },
        },
        TensorProto: {
          fields: {
            dtype: { type: 'int32', id: 1 },
            tensorShape: { type: 'TensorShapeProto', id: 2 },
            tensorContent: { type: 'bytes', id: 4 },
            floatVal: { rule: 'repeated', type: 'float', id: 5 },
            doubleVal: { rule: 'repeated', type: 'double', id: 6 },
            intVal: { rule: 'repeated', type: 'int32', id: 7 },
          },
        },
        TensorShapeProto: {
          fields: {
            dim: { rule: 'repeated', type: 'TensorShapeDim', id: 2 },
            unknownRank: { type: 'bool', id: 3 },
          },
        },
        TensorShapeDim: {
          fields: { size: { type: 'int64', id: 1 }, name: { type: 'string', id: 2 } },
        },
      },
    },
  },
});

const EventType = root.lookupType('tensorflow.Event');

export interface TensorProto {
  dtype: number;
  tensorShape?: { dim: { size: number }[]; unknownRank: boolean };
  tensorContent: Uint8Array;
  floatVal: number[];
  doubleVal: number[];
}

export interface SummaryValue {
  tag: string;
  /** Which of the declared values is set: the legacy float, a tensor, or neither (a histogram, an image, …). */
  value?: 'simpleValue' | 'tensor';
  simpleValue: number;
  tensor?: TensorProto;
  metadata?: { pluginData?: { pluginName: string } };
}

/** `SessionLog.SessionStatus.START`: a writer (re)started at the event's step (event.proto). */
export const SESSION_START = 1;

export interface TfEvent {
  wallTime: number;
  step: number;
  what?: 'fileVersion' | 'summary' | 'sessionLog';
  fileVersion: string;
  summary?: { value: SummaryValue[] };
  sessionLog?: { status: number };
}

/** The number in a `file_version` such as `brain.Event:2` (TensorBoard's event_util.ParseFileVersion), else 0. */
export function fileVersionNumber(fileVersion: string): number {
  const n = Number(fileVersion.split(':').at(-1));
  return Number.isFinite(n) ? n : 0;
}

/** Decodes one `tensorflow.Event`; throws (protobufjs' message) on malformed bytes. */
export function decodeEvent(payload: Uint8Array): TfEvent {
  const message = EventType.decode(payload);
  return EventType.toObject(message, { longs: Number, defaults: true, arrays: true, oneofs: true }) as TfEvent;
}

/**
 * A value's scalar, or undefined when it holds none: the legacy `simple_value` (what PyTorch's
 * `SummaryWriter.add_scalar` writes), or a rank-0 DT_FLOAT/DT_DOUBLE tensor (TF2's `tf.summary.scalar`) in
 * `float_val`, `double_val` or `tensor_content`. A float32 comes back as its shortest decimal (below).
 */
export function scalarOf(v: SummaryValue): number | undefined {
  if (v.value === 'simpleValue') return shortestFloat32(v.simpleValue);
  if (v.value !== 'tensor' || !v.tensor) return undefined;
  const plugin = v.metadata?.pluginData?.pluginName;
  if (plugin && plugin !== 'scalars') return undefined;
  const t = v.tensor;
  if (t.tensorShape?.unknownRank || (t.tensorShape?.dim.length ?? 0) > 0) return undefined;
  if (t.dtype === DT_FLOAT) {
    if (t.floatVal.length === 1) return shortestFloat32(t.floatVal[0]);
    if (t.tensorContent.length === 4)
      return shortestFloat32(new DataView(t.tensorContent.buffer, t.tensorContent.byteOffset, 4).getFloat32(0, true));
  } else if (t.dtype === DT_DOUBLE) {
    if (t.doubleVal.length === 1) return t.doubleVal[0];
    if (t.tensorContent.length === 8)
      return new DataView(t.tensorContent.buffer, t.tensorContent.byteOffset, 8).getFloat64(0, true);
  }
  return undefined;
}

/**
 * A float32 as the shortest decimal that reads back as the same float32: `add_scalar(0.1)` stores 0.1f, which is
 * 0.10000000149011612 as a double; the writer meant 0.1, and TensorBoard shows 0.1.
 */
export function shortestFloat32(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  for (let digits = 1; digits < 9; digits++) {
    const d = Number(x.toPrecision(digits));
    if (Math.fround(d) === x) return d;
  }
  return x;
}
