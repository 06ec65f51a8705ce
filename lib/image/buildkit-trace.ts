/**
 * Decodes BuildKit's progress messages. Through the Engine API, a BuildKit build streams
 * `{"id":"moby.buildkit.trace","aux":"<base64>"}` lines whose payload is a protobuf
 * `moby.buildkit.v1.StatusResponse` (vertexes = 1, statuses = 2, logs = 3, warnings = 4).
 *
 * Hand-written: we read six fields of three messages, and a protobuf runtime plus BuildKit's .proto
 * files would be a large dependency for that. Unknown fields are skipped, as the wire format allows.
 */

export interface TraceVertex {
  readonly digest: string;
  readonly name: string;
  readonly cached: boolean;
  readonly started: boolean;
  readonly completed: boolean;
  readonly error?: string;
}

export interface TraceLog {
  readonly vertex: string;
  /** 1 stdout, 2 stderr. */
  readonly stream: number;
  readonly message: string;
}

export interface TraceStatus {
  readonly vertex: string;
  readonly id: string;
  readonly current: number;
  readonly total: number;
}

export interface BuildkitTrace {
  readonly vertexes: TraceVertex[];
  readonly statuses: TraceStatus[];
  readonly logs: TraceLog[];
}

type Field = {
  readonly field: number;
  readonly wire: number;
  readonly varint?: bigint;
  readonly bytes?: Buffer;
};

function* fields(buf: Buffer): Generator<Field> {
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const byte = buf[pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    switch (wire) {
      case 0:
        yield { field, wire, varint: varint() };
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const len = Number(varint());
        if (pos + len > buf.length) throw new Error('truncated field');
        yield { field, wire, bytes: buf.subarray(pos, pos + len) };
        pos += len;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new Error(`unsupported wire type ${wire}`);
    }
  }
}

function decodeVertex(buf: Buffer): TraceVertex {
  let digest = '';
  let name = '';
  let cached = false;
  let started = false;
  let completed = false;
  let error: string | undefined;
  for (const f of fields(buf)) {
    if (f.field === 1 && f.bytes) digest = f.bytes.toString('utf8');
    else if (f.field === 3 && f.bytes) name = f.bytes.toString('utf8');
    else if (f.field === 4 && f.varint !== undefined) cached = f.varint !== 0n;
    else if (f.field === 5 && f.bytes) started = true;
    else if (f.field === 6 && f.bytes) completed = true;
    else if (f.field === 7 && f.bytes && f.bytes.length > 0) error = f.bytes.toString('utf8');
  }
  return { digest, name, cached, started, completed, ...(error ? { error } : {}) };
}

function decodeStatus(buf: Buffer): TraceStatus {
  let id = '';
  let vertex = '';
  let current = 0;
  let total = 0;
  for (const f of fields(buf)) {
    if (f.field === 1 && f.bytes) id = f.bytes.toString('utf8');
    else if (f.field === 2 && f.bytes) vertex = f.bytes.toString('utf8');
    else if (f.field === 4 && f.varint !== undefined) current = Number(f.varint);
    else if (f.field === 5 && f.varint !== undefined) total = Number(f.varint);
  }
  return { id, vertex, current, total };
}

function decodeLog(buf: Buffer): TraceLog {
  let vertex = '';
  let stream = 1;
  let message = '';
  for (const f of fields(buf)) {
    if (f.field === 1 && f.bytes) vertex = f.bytes.toString('utf8');
    else if (f.field === 3 && f.varint !== undefined) stream = Number(f.varint);
    else if (f.field === 4 && f.bytes) message = f.bytes.toString('utf8');
  }
  return { vertex, stream, message };
}

/** Decodes one `aux` payload (base64). Throws on a malformed message. */
export function decodeBuildkitTrace(base64: string): BuildkitTrace {
  const out: BuildkitTrace = { vertexes: [], statuses: [], logs: [] };
  for (const f of fields(Buffer.from(base64, 'base64'))) {
    if (!f.bytes) continue;
    if (f.field === 1) out.vertexes.push(decodeVertex(f.bytes));
    else if (f.field === 2) out.statuses.push(decodeStatus(f.bytes));
    else if (f.field === 3) out.logs.push(decodeLog(f.bytes));
  }
  return out;
}
