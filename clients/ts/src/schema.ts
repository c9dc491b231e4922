// Runtime knowledge of the voxcol.v1 messages, from the descriptor set embedded at build time:
// checking and completing caller-supplied request objects before they are encoded, and proto3
// JSON (the canonical mapping) for any message.
import {
  ScalarType,
  createFileRegistry,
  fromBinary,
  fromJson,
  toBinary,
  toJson,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonValue,
} from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

import { VoxcolArgumentError } from "./errors";
import { descriptorSetBase64 } from "./gen/descriptor_set";

/** The voxcol.v1 (and grpc.health.v1) descriptors. */
export const registry = createFileRegistry(
  fromBinary(FileDescriptorSetSchema, Buffer.from(descriptorSetBase64, "base64")),
);

/** The descriptor of a message type by full name ("voxcol.v1.RaycastRequest"). */
export function messageDescriptor(typeName: string): DescMessage {
  const desc = registry.getMessage(typeName);
  if (desc === undefined) throw new Error(`unknown message type ${typeName}`);
  return desc;
}

/**
 * What callers may pass where a message of type T is expected: every field optional (unset means
 * the proto default), 64-bit integers as bigint, safe-integer number or decimal string, repeated
 * numbers as arrays or typed arrays (e.g. a Float32Array of ray origins).
 */
export type Init<T> = T extends bigint
  ? bigint | number | string
  : T extends Uint8Array
    ? Uint8Array
    : T extends ReadonlyArray<infer E>
      ? E extends number
        ? ArrayLike<number>
        : ReadonlyArray<Init<E>>
      : T extends object
        ? { [K in keyof T]?: Init<T[K]> | undefined }
        : T;

type Normalizer = (value: unknown, path: string) => unknown;

const normalizers = new Map<DescMessage, Normalizer>();

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
    case "number":
    case "bigint":
    case "boolean":
      return `${typeof value} ${String(value)}`;
    case "object":
      return value instanceof Uint8Array ? "a Uint8Array" : `an object (${value.constructor?.name ?? "no prototype"})`;
    default:
      return typeof value;
  }
}

function fail(path: string, expected: string, value: unknown): never {
  throw new VoxcolArgumentError(`${path} must be ${expected}, got ${describe(value)}`);
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

function toBigInt(value: unknown, path: string, unsigned: boolean): bigint {
  let result: bigint;
  if (typeof value === "bigint") {
    result = value;
  } else if (typeof value === "number" && Number.isSafeInteger(value)) {
    result = BigInt(value);
  } else if (typeof value === "string" && /^-?[0-9]+$/.test(value)) {
    result = BigInt(value);
  } else {
    fail(path, `a ${unsigned ? "uint64" : "int64"} (bigint, safe integer or decimal string)`, value);
  }
  if (unsigned ? result < 0n || result > UINT64_MAX : result < INT64_MIN || result > INT64_MAX) {
    fail(path, `in the ${unsigned ? "uint64" : "int64"} range`, value);
  }
  return result;
}

function scalarChecker(scalar: ScalarType): (value: unknown, path: string) => unknown {
  switch (scalar) {
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return (v, p) => (typeof v === "number" ? v : fail(p, "a number", v));
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return (v, p) =>
        Number.isInteger(v) && (v as number) >= -0x80000000 && (v as number) <= 0x7fffffff
          ? v
          : fail(p, "an int32 (an integer number)", v);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return (v, p) =>
        Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff
          ? v
          : fail(p, "a uint32 (a non-negative integer number)", v);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return (v, p) => toBigInt(v, p, true);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return (v, p) => toBigInt(v, p, false);
    case ScalarType.BOOL:
      return (v, p) => (typeof v === "boolean" ? v : fail(p, "a boolean", v));
    case ScalarType.STRING:
      return (v, p) => (typeof v === "string" ? v : fail(p, "a string", v));
    case ScalarType.BYTES:
      return (v, p) => (v instanceof Uint8Array ? v : fail(p, "a Uint8Array (or Buffer)", v));
  }
}

function scalarDefault(scalar: ScalarType): unknown {
  switch (scalar) {
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return 0n;
    case ScalarType.BOOL:
      return false;
    case ScalarType.STRING:
      return "";
    case ScalarType.BYTES:
      return new Uint8Array(0);
    default:
      return 0;
  }
}

function enumChecker(desc: DescEnum): (value: unknown, path: string) => number {
  return (v, p) => {
    if (typeof v === "number" && Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff) return v;
    if (typeof v === "string") {
      const value = desc.values.find((candidate) => candidate.name === v);
      if (value !== undefined) return value.number;
    }
    return fail(p, `a ${desc.name} value (a number or one of ${desc.values.map((e) => e.name).join(", ")})`, v);
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

const typedNumberArrays = [Float32Array, Float64Array, Int32Array, Uint32Array, Int16Array, Uint16Array, Int8Array, Uint8Array];

interface CompiledField {
  name: string;
  normalize: (value: unknown, path: string) => unknown;
  defaultValue: () => unknown;
  oneof: string | undefined;
}

function compileField(field: DescField): CompiledField {
  let normalize: (value: unknown, path: string) => unknown;
  let defaultValue: () => unknown;
  switch (field.fieldKind) {
    case "scalar": {
      normalize = scalarChecker(field.scalar);
      const d = scalarDefault(field.scalar);
      defaultValue = field.scalar === ScalarType.BYTES ? () => new Uint8Array(0) : () => d;
      break;
    }
    case "enum":
      normalize = enumChecker(field.enum);
      defaultValue = () => 0;
      break;
    case "message": {
      const message = field.message;
      normalize = (v, p) => normalizerFor(message)(v, p);
      defaultValue = () => undefined;
      break;
    }
    case "list": {
      let element: (value: unknown, path: string) => unknown;
      let numeric = false;
      if (field.listKind === "scalar") {
        element = scalarChecker(field.scalar);
        numeric = field.scalar !== ScalarType.STRING && field.scalar !== ScalarType.BYTES &&
          field.scalar !== ScalarType.BOOL && scalarDefault(field.scalar) === 0;
      } else if (field.listKind === "enum") {
        element = enumChecker(field.enum);
      } else {
        const message = field.message;
        element = (v, p) => normalizerFor(message)(v, p);
      }
      normalize = (v, p) => {
        // Typed arrays of numbers go through unchanged (the encoder iterates them).
        if (numeric && typedNumberArrays.some((type) => v instanceof type)) return v;
        if (!Array.isArray(v)) return fail(p, numeric ? "an array or typed array of numbers" : "an array", v);
        const out = new Array<unknown>(v.length);
        for (let i = 0; i < v.length; i++) out[i] = element(v[i], `${p}[${i}]`);
        return out;
      };
      defaultValue = () => [];
      break;
    }
    case "map":
      throw new Error(`map fields are not used by voxcol.v1 (${field.toString()})`);
  }
  const explicitPresence = field.fieldKind !== "list" && field.proto.proto3Optional === true;
  return {
    name: field.localName,
    normalize,
    defaultValue: explicitPresence || field.oneof !== undefined ? () => undefined : defaultValue,
    oneof: field.oneof?.localName,
  };
}

function normalizerFor(desc: DescMessage): Normalizer {
  const cached = normalizers.get(desc);
  if (cached !== undefined) return cached;
  // Compiled on first use (message fields refer to other normalizers, possibly this one).
  let compiled: CompiledField[] | undefined;
  let oneofBits: number[] = [];
  let known: Record<string, true> = {};
  const compile = (): CompiledField[] => {
    const fields = desc.fields.map(compileField);
    const groups = [...new Set(fields.map((f) => f.oneof).filter((o): o is string => o !== undefined))];
    oneofBits = fields.map((f) => (f.oneof === undefined ? 0 : 1 << groups.indexOf(f.oneof)));
    known = Object.fromEntries(fields.map((f) => [f.name, true as const]));
    compiled = fields;
    return fields;
  };
  const normalizer: Normalizer = (value, path) => {
    if (!isPlainObject(value)) return fail(path, `an object (${desc.name})`, value);
    const fields = compiled ?? compile();
    for (const key in value) {
      if (known[key] !== true && value[key] !== undefined) {
        throw new VoxcolArgumentError(
          `${path}.${key} is not a field of ${desc.typeName} (fields: ${Object.keys(known).join(", ")})`,
        );
      }
    }
    const out: Record<string, unknown> = {};
    let oneofsSet = 0;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      const v = value[field.name];
      if (v === undefined || v === null) {
        out[field.name] = field.defaultValue();
        continue;
      }
      const bit = oneofBits[i]!;
      if (bit !== 0) {
        if ((oneofsSet & bit) !== 0) {
          const other = fields.find((f, j) => j < i && oneofBits[j] === bit && value[f.name] != null);
          throw new VoxcolArgumentError(
            `${path}: set at most one of the oneof ${field.oneof ?? ""} (got ${other?.name ?? "?"} and ${field.name})`,
          );
        }
        oneofsSet |= bit;
      }
      out[field.name] = field.normalize(v, `${path}.${field.name}`);
    }
    return out;
  };
  normalizers.set(desc, normalizer);
  return normalizer;
}

const byTypeName = new Map<string, Normalizer>();

/**
 * Checks `value` against message type `typeName` and returns the complete message (defaults
 * filled in, 64-bit integers as bigint, enum names as numbers) that the generated encoder takes.
 * Throws VoxcolArgumentError naming the field (`label.origin.x must be a number, ...`).
 */
export function normalize<T>(typeName: string, value: unknown, label: string): T {
  let normalizer = byTypeName.get(typeName);
  if (normalizer === undefined) {
    normalizer = normalizerFor(messageDescriptor(typeName));
    byTypeName.set(typeName, normalizer);
  }
  return normalizer(value ?? {}, label) as T;
}

/** Encodes-and-prints a message in proto3 JSON (the canonical mapping). */
export function messageToJson(typeName: string, binary: Uint8Array): JsonValue {
  const desc = messageDescriptor(typeName);
  return toJson(desc, fromBinary(desc, binary), { registry });
}

/** Parses proto3 JSON into the binary encoding of `typeName` (throws on unknown fields). */
export function messageFromJson(typeName: string, json: JsonValue): Uint8Array {
  const desc = messageDescriptor(typeName);
  return toBinary(desc, fromJson(desc, json, { registry }));
}
