import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifyInstance, FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';

/**
 * Fastify's own validator factory, so both compilers have exactly its Ajv options (useDefaults, removeAdditional,
 * allErrors off) and ajv-formats; they differ in coercion only. The app adds no shared schemas (`addSchema`): a custom
 * compiler would not see them.
 */
const buildCompiler = AjvCompiler();

/** A querystring, params and headers are text: `limit=10` must become 10 (Fastify's default, coerceTypes 'array'). */
const coercing = buildCompiler({}, { customOptions: {} });

/** A JSON body says its types itself: coercion would take null or true for 0 or 1, [52] for 52, 12345 for "12345". */
const exact = buildCompiler({}, { customOptions: { coerceTypes: false } });

type Compiled = ReturnType<typeof coercing>;

/** What Fastify asks of a validator compiler, and what it gets: a validate function with `errors`. */
type ValidatorCompiler = FastifySchemaCompiler<unknown>;
type ValidationResult = ReturnType<ValidatorCompiler>;

/** A fault found before or after the schema's own validation, in Ajv's error form (Fastify formats it as `<part>/<field> <message>`). */
type Check = (data: unknown) => FastifySchemaValidationError | null;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a property's schema takes a number: `type` number or integer, also inside a union (anyOf/oneOf). */
const takesNumber = (schema: unknown): boolean => {
  if (!isRecord(schema)) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('number') || types.includes('integer')) return true;
  return [schema.anyOf, schema.oneOf].some((list) => Array.isArray(list) && list.some(takesNumber));
};

/** A number written in decimal, and none of the other forms Ajv's `+value` reads (' ' as 0, '0x10' as 16, '0b1' as 1). */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

const notNumber = (field: string, message: string): FastifySchemaValidationError => ({
  keyword: 'type',
  instancePath: `/${field}`,
  schemaPath: `#/properties/${field}/type`,
  params: {},
  message,
});

/**
 * Ajv coerces a query string to a number with `+value`, which reads blank or whitespace as 0 (`longitude=%20` would
 * send a location at 0) and hex or binary as their values: the numeric fields of a querystring schema take decimal
 * numbers only. Runs before Ajv, which replaces the strings.
 */
const decimalQueryNumbers = (schema: unknown): Check | null => {
  const properties = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  const fields = Object.keys(properties).filter((name) => takesNumber(properties[name]));
  if (fields.length === 0) return null;
  return (data) => {
    if (!isRecord(data)) return null;
    for (const field of fields) {
      const value = data[field];
      const values: unknown[] = Array.isArray(value) ? value : [value];
      const texts = values.filter((v): v is string => typeof v === 'string');
      if (texts.some((v) => !DECIMAL.test(v))) return notNumber(field, 'must be a decimal number');
      // 1e400 overflows a double to Infinity: refused here as a JSON body's 1e400 is (Ajv's strict numbers), not passed on.
      if (texts.some((v) => !Number.isFinite(Number(v)))) return notNumber(field, 'must be a number a double holds (up to about 1.8e308)');
    }
    return null;
  };
};

/**
 * A query parameter given twice (`type=text&type=text`) arrives as a list; no query parameter takes one, and Ajv's
 * words for a list met by a union of literals were a dozen lines naming no cause. Runs before Ajv.
 */
const singleQueryValues = (schema: unknown): Check | null => {
  const fields = isRecord(schema) && isRecord(schema.properties) ? Object.keys(schema.properties) : [];
  if (fields.length === 0) return null;
  return (data) => {
    if (!isRecord(data)) return null;
    const field = fields.find((name) => Array.isArray(data[name]));
    if (field === undefined) return null;
    return { keyword: 'single', instancePath: `/${field}`, schemaPath: `#/properties/${field}`, params: {}, message: 'is given more than once: send it once' };
  };
};

/** Half of a UTF-16 surrogate pair standing alone: a JSON escape (`\ud800`) can make one, UTF-8 cannot carry it. */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** Any surrogate, paired or not: most strings hold none, and this test is cheaper than the one above. */
const ANY_SURROGATE = /[\ud800-\udfff]/;

const isIllFormed = (text: string): boolean => ANY_SURROGATE.test(text) && LONE_SURROGATE.test(text);

/** A key as a JSON Pointer segment (RFC 6901), so the error names the field even when its name holds `/` or `~`. */
const pointerSegment = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** A value met in the walk, with the key it sits under and the entry it sits in (null: the input itself). */
interface Visit {
  value: unknown;
  key: string;
  parent: Visit | null;
}

/** The JSON Pointer of a visited value, and of its key `last` when given. */
const pathOf = (visit: Visit, last?: string): string => {
  const keys = last === undefined ? [] : [last];
  for (let at: Visit | null = visit; at?.parent; at = at.parent) keys.push(at.key);
  return keys
    .reverse()
    .map((key) => `/${pointerSegment(key)}`)
    .join('');
};

/**
 * Every string of the input, keys included, must be well-formed Unicode: a lone surrogate would reach the event store
 * as U+FFFD (protobuf writes UTF-8), a silently altered value. Walks with a stack of its own, not recursion, so a
 * deeply nested input costs memory bounded by its size rather than the call stack. Paths are built only for the
 * value found at fault (a walk that builds one per field cost ~2 % of the gateway's CPU per send).
 */
const wellFormedStrings: Check = (data) => {
  const pending: Visit[] = [{ value: data, key: '', parent: null }];
  for (let visit = pending.pop(); visit; visit = pending.pop()) {
    const { value } = visit;
    if (typeof value === 'string') {
      if (isIllFormed(value)) return illFormed(pathOf(visit));
    } else if (typeof value === 'object' && value !== null) {
      for (const key in value) {
        if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
        if (isIllFormed(key)) return illFormed(pathOf(visit, key));
        pending.push({ value: (value as Record<string, unknown>)[key], key, parent: visit });
      }
    }
  }
  return null;
};

const illFormed = (instancePath: string): FastifySchemaValidationError => ({
  keyword: 'wellFormed',
  instancePath,
  schemaPath: '#',
  params: {},
  message: 'must be well-formed Unicode: it holds an unpaired UTF-16 surrogate (\\ud800-\\udfff alone)',
});

/** The schema's validator, with checks of our own before it (on the input as sent) and after it (on what it kept). */
const withChecks = (validate: Compiled, before: Check[], after: Check[]): ValidationResult => {
  const fail = (errors: FastifySchemaValidationError[]) => {
    run.errors = errors;
    return false;
  };
  const run: ValidationResult = (data: unknown) => {
    for (const check of before) {
      const fault = check(data);
      if (fault) return fail([fault]);
    }
    const valid = validate(data);
    // No route schema is $async; a promise here would be a mistake, not a pass.
    if (typeof valid !== 'boolean') throw new Error('asynchronous schemas are not supported');
    if (!valid) return fail(validate.errors ?? []);
    for (const check of after) {
      const fault = check(data);
      if (fault) return fail([fault]);
    }
    run.errors = null;
    return true;
  };
  return run;
};

/**
 * The validator of one part of a route: bodies as typed JSON, the rest (text) coerced, with a querystring's numbers
 * held to decimal; strings of a body or query must be well-formed Unicode. The server validates with it, and the
 * OpenAPI document runs it to make each operation's 400 example (operationExamples.ts).
 */
export const compileValidator: ValidatorCompiler = (route) => {
  // The factory's compilers take the route's definition (schema, method, url, part), as Fastify's default does.
  const definition = { ...route };
  if (route.httpPart === 'body') return withChecks(exact(definition), [], [wellFormedStrings]);
  if (route.httpPart !== 'querystring') return withChecks(coercing(definition), [], []);
  // A query cannot carry a lone surrogate (%ED%A0%80 is not UTF-8, so not decodable); checked anyway, so the rule
  // does not hang on how the query happens to be parsed.
  const before = [singleQueryValues(route.schema), decimalQueryNumbers(route.schema)].filter((check): check is Check => check !== null);
  return withChecks(coercing(definition), before, [wellFormedStrings]);
};

/** Validates each part of every route with compileValidator. Must be set before the routes are registered. */
export const registerValidation = (app: FastifyInstance): void => {
  app.setValidatorCompiler<unknown>(compileValidator);
};
