/**
 * The Standard Schema interface (https://standardschema.dev), version 1, copied from
 * `@standard-schema/spec` 1.1.0 (`packages/spec/src/index.ts` of
 * https://github.com/standard-schema/standard-schema, MIT, Copyright (c) 2024 Colin
 * McDonnell) as the spec intends: a library that accepts schemas copies the types instead of
 * depending on a package. zod (3.24 and 4), valibot, ArkType and others implement it, so
 * `defineProblem()` and the validation helpers take a schema of any of them, and a schema
 * written by hand (a `~standard` property with a `validate` function) as well.
 *
 * Only the validating interface is copied; the JSON Schema interface of the same file is not
 * used here.
 *
 * @module
 */

/**
 * The Standard Typed interface: the base that carries the input and output types.
 *
 * @example
 * ```ts
 * const typed: StandardTypedV1<string> = { '~standard': { version: 1, vendor: 'mine' } }
 * ```
 */
export interface StandardTypedV1<Input = unknown, Output = Input> {
  /** The Standard properties. */
  readonly '~standard': StandardTypedV1.Props<Input, Output>
}

/**
 * Members of {@link StandardTypedV1}.
 *
 * @example
 * ```ts
 * type Input = StandardTypedV1.InferInput<typeof schema>
 * ```
 */
export declare namespace StandardTypedV1 {
  /** The Standard Typed properties interface. */
  export interface Props<Input = unknown, Output = Input> {
    /** The version number of the standard. */
    readonly version: 1
    /** The vendor name of the schema library. */
    readonly vendor: string
    /** Inferred types associated with the schema. */
    readonly types?: Types<Input, Output> | undefined
  }

  /** The Standard Typed types interface. */
  export interface Types<Input = unknown, Output = Input> {
    /** The input type of the schema. */
    readonly input: Input
    /** The output type of the schema. */
    readonly output: Output
  }

  /** Infers the input type of a Standard Typed. */
  export type InferInput<Schema extends StandardTypedV1> = NonNullable<
    Schema['~standard']['types']
  >['input']

  /** Infers the output type of a Standard Typed. */
  export type InferOutput<Schema extends StandardTypedV1> = NonNullable<
    Schema['~standard']['types']
  >['output']
}

/**
 * The Standard Schema interface: a schema that validates unknown values.
 *
 * @example
 * ```ts
 * const positive: StandardSchemaV1<number> = {
 *   '~standard': {
 *     version: 1,
 *     vendor: 'mine',
 *     validate: (value) =>
 *       typeof value === 'number' && value > 0
 *         ? { value }
 *         : { issues: [{ message: 'Expected a positive number' }] },
 *   },
 * }
 * ```
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

/**
 * Members of {@link StandardSchemaV1}: the result and issue shapes, and type inference.
 *
 * @example
 * ```ts
 * type Order = StandardSchemaV1.InferOutput<typeof OrderSchema>
 * const issue: StandardSchemaV1.Issue = { message: 'Required', path: ['sku'] }
 * ```
 */
export declare namespace StandardSchemaV1 {
  /** The Standard Schema properties interface. */
  export interface Props<Input = unknown, Output = Input>
    extends StandardTypedV1.Props<Input, Output> {
    /** Validates unknown input values. */
    readonly validate: (
      value: unknown,
      options?: StandardSchemaV1.Options | undefined,
    ) => Result<Output> | Promise<Result<Output>>
  }

  /** The result interface of the validate function. */
  export type Result<Output> = SuccessResult<Output> | FailureResult

  /** The result interface if validation succeeds. */
  export interface SuccessResult<Output> {
    /** The typed output value. */
    readonly value: Output
    /** A falsy value for `issues` indicates success. */
    readonly issues?: undefined
  }

  /** Options of the validate function. */
  export interface Options {
    /** Explicit support for additional vendor-specific parameters, if needed. */
    readonly libraryOptions?: Record<string, unknown> | undefined
  }

  /** The result interface if validation fails. */
  export interface FailureResult {
    /** The issues of failed validation. */
    readonly issues: ReadonlyArray<Issue>
  }

  /** The issue interface of the failure output. */
  export interface Issue {
    /** The error message of the issue. */
    readonly message: string
    /** The path of the issue, if any. */
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }

  /** The path segment interface of the issue. */
  export interface PathSegment {
    /** The key representing a path segment. */
    readonly key: PropertyKey
  }

  /** The Standard types interface. */
  export interface Types<Input = unknown, Output = Input>
    extends StandardTypedV1.Types<Input, Output> {}

  /** Infers the input type of a Standard. */
  export type InferInput<Schema extends StandardTypedV1> = StandardTypedV1.InferInput<Schema>

  /** Infers the output type of a Standard. */
  export type InferOutput<Schema extends StandardTypedV1> = StandardTypedV1.InferOutput<Schema>
}
