import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * AWS's own API model for a service, as botocore ships it (the same model the AWS CLI validates
 * against), and a validator for required members, types, lengths, ranges, patterns and enums.
 */
interface Shape {
  type: string;
  members?: Record<string, { shape: string }>;
  required?: string[];
  member?: { shape: string };
  key?: { shape: string };
  value?: { shape: string };
  min?: number;
  max?: number;
  pattern?: string;
  enum?: string[];
}
interface ServiceModel {
  operations: Record<string, { input: { shape: string } }>;
  shapes: Record<string, Shape>;
}

export function loadBotocoreModel(service: string): ServiceModel {
  const dir = execFileSync(
    'python3',
    ['-c', 'import botocore, os; print(os.path.dirname(botocore.__file__))'],
    {
      encoding: 'utf8',
    },
  ).trim();
  const base = path.join(dir, 'data', service);
  const version = fs.readdirSync(base).sort().pop()!;
  const file = path.join(base, version, 'service-2.json.gz');
  const text = fs.existsSync(file)
    ? gunzipSync(fs.readFileSync(file)).toString('utf8')
    : fs.readFileSync(path.join(base, version, 'service-2.json'), 'utf8');
  return JSON.parse(text) as ServiceModel;
}

/** Every violation of the operation's input model, as `Path: what`. Empty when valid. */
export function validateAgainstModel(model: ServiceModel, operation: string, input: unknown): string[] {
  const errors: string[] = [];
  const visit = (shapeName: string, value: unknown, at: string) => {
    const shape = model.shapes[shapeName];
    if (value === undefined) return;
    const len = (n: number) => {
      if (shape.min !== undefined && n < shape.min)
        errors.push(`${at}: length/value ${n} < min ${shape.min}`);
      if (shape.max !== undefined && n > shape.max)
        errors.push(`${at}: length/value ${n} > max ${shape.max}`);
    };
    switch (shape.type) {
      case 'structure': {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          errors.push(`${at}: expected structure`);
          return;
        }
        for (const r of shape.required ?? []) {
          if ((value as Record<string, unknown>)[r] === undefined) errors.push(`${at}.${r}: required`);
        }
        for (const [k, v] of Object.entries(value)) {
          const member = shape.members?.[k];
          if (!member) errors.push(`${at}.${k}: not a member of ${shapeName}`);
          else visit(member.shape, v, `${at}.${k}`);
        }
        return;
      }
      case 'list':
        if (!Array.isArray(value)) return void errors.push(`${at}: expected list`);
        len(value.length);
        value.forEach((v, i) => visit(shape.member!.shape, v, `${at}[${i}]`));
        return;
      case 'map':
        if (typeof value !== 'object' || value === null) return void errors.push(`${at}: expected map`);
        len(Object.keys(value).length);
        for (const [k, v] of Object.entries(value)) {
          visit(shape.key!.shape, k, `${at}{key ${k}}`);
          visit(shape.value!.shape, v, `${at}.${k}`);
        }
        return;
      case 'string':
        if (typeof value !== 'string') return void errors.push(`${at}: expected string`);
        len(value.length);
        if (shape.enum && !shape.enum.includes(value))
          errors.push(`${at}: ${value} not in enum ${shapeName}`);
        // Full match: stricter than the find semantics some services apply, so passing it passes AWS.
        if (shape.pattern && !new RegExp(`^(?:${shape.pattern})$`, 'u').test(value)) {
          errors.push(`${at}: ${JSON.stringify(value)} does not match ${shape.pattern}`);
        }
        return;
      case 'integer':
      case 'long':
        if (!Number.isInteger(value)) return void errors.push(`${at}: expected integer`);
        len(value as number);
        return;
      case 'float':
      case 'double':
        if (typeof value !== 'number') return void errors.push(`${at}: expected number`);
        return;
      case 'boolean':
        if (typeof value !== 'boolean') errors.push(`${at}: expected boolean`);
        return;
      default:
        return;
    }
  };
  visit(model.operations[operation].input.shape, input, operation);
  return errors;
}
