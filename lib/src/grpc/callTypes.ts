import type { MethodDefinition } from '@grpc/proto-loader';

/** `T` without its index signatures (the generated service types extend grpc-js's string-indexed ones). */
type Named<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/** A service's handlers without `Call`: startGrpcServer serves it from the unary ones. */
export type HandlersWithoutCall<Handlers> = Omit<Named<Handlers>, 'Call'>;

/** The method names of a generated service definition (InstancesDefinition, ...). */
export type MethodName<Definition> = Extract<keyof Named<Definition>, string>;

/** What a method's client sends: its request message, as built in code. */
export type RequestOf<Method> = Method extends Pick<MethodDefinition<infer Req, unknown>, 'requestSerialize'> ? Req : never;

/** What a method's client gets: its response message, as decoded (defaults filled in). */
export type ReplyOf<Method> = Method extends Pick<MethodDefinition<unknown, unknown, unknown, infer Res>, 'responseDeserialize'> ? Res : never;
