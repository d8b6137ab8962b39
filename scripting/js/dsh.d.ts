// Type declarations for dsh plugins written in TypeScript or JavaScript: the
// "dsh" module and the capability modules "dsh/fs", "dsh/process",
// "dsh/http" and "dsh/path". `dsh types --out DIR` writes this file; put it
// beside your plugins (a *.d.ts file is never loaded as a plugin) or list it
// in tsconfig.json's "files".
//
// Plugins run in goja, not in Node or a browser: use a tsconfig with
// "lib": ["es2020"] and neither the DOM library nor @types/node, since this
// file declares the globals the host provides (console, timers,
// AbortController, AbortSignal).
//
// Values crossing the host boundary are lossless JSON (JsonValue): no
// undefined, NaN, Infinity, -0, functions, class instances, Dates, Maps or
// cycles. Everything the host hands a script (arguments, results, executions)
// is deeply frozen.

// ---------------------------------------------------------------------------
// Globals the host installs in every plugin instance.

interface Console {
  /** Logs at info level into the host's log, tagged with the plugin. */
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
}
declare var console: Console;

/** Runs fn on the plugin's event loop after ms milliseconds. */
declare function setTimeout(fn: (...args: any[]) => void, ms?: number, ...args: any[]): number;
declare function clearTimeout(id: number | undefined): void;
declare function queueMicrotask(fn: () => void): void;

interface AbortSignalEventMap {
  abort: { readonly type: "abort"; readonly target: AbortSignal };
}

/** A standard-shaped AbortSignal: an execution's signal aborts when its call is cancelled. */
interface AbortSignal {
  readonly aborted: boolean;
  readonly reason: any;
  onabort: ((event: AbortSignalEventMap["abort"]) => void) | null;
  throwIfAborted(): void;
  addEventListener(type: "abort", listener: (event: AbortSignalEventMap["abort"]) => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: (event: AbortSignalEventMap["abort"]) => void): void;
}
declare var AbortSignal: {
  readonly prototype: AbortSignal;
  /** A signal that is already aborted. */
  abort(reason?: any): AbortSignal;
  /** A signal that aborts with a TimeoutError after ms milliseconds. */
  timeout(ms: number): AbortSignal;
};

interface AbortController {
  readonly signal: AbortSignal;
  abort(reason?: any): void;
}
declare var AbortController: {
  readonly prototype: AbortController;
  new (): AbortController;
};

// ---------------------------------------------------------------------------

declare module "dsh" {
  // ---- Lossless JSON ------------------------------------------------------

  export type JsonPrimitive = null | boolean | number | string;
  export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
  export interface JsonObject {
    [key: string]: JsonValue;
  }

  // ---- Content blocks and messages ---------------------------------------

  export type TextBlock = {
    type: "text";
    text: string;
  };
  /** Model thinking, distinct from visible text. */
  export type ReasoningBlock = {
    type: "reasoning";
    text: string;
  };
  /** An image, by a durable attachment reference. */
  export type ImageBlock = {
    type: "image";
    attachment: JsonValue;
  };
  export type ToolCallBlock = {
    type: "tool-call";
    id: string;
    name: string;
    /** The raw JSON text the model emitted, not parsed. */
    arguments: string;
  };
  export type ToolResultBlock = {
    type: "tool-result";
    toolCallId: string;
    content: ContentBlock[];
    isError?: boolean;
  };
  /**
   * The content block kinds, by type. The union is merge-extensible: add a
   * kind with `declare module "dsh" { interface ContentBlockTypes { "my-kind": MyBlock } }`.
   */
  export interface ContentBlockTypes {
    text: TextBlock;
    reasoning: ReasoningBlock;
    image: ImageBlock;
    "tool-call": ToolCallBlock;
    "tool-result": ToolResultBlock;
  }
  export type ContentBlock = ContentBlockTypes[keyof ContentBlockTypes];

  export type MessageSource =
    | { kind: "user" }
    | { kind: "plugin"; plugin: string; form?: JsonValue }
    | { kind: "model"; provider: string; model: string; replayState?: JsonValue }
    | { kind: "tool"; callId: string };

  export type Message = {
    id: string;
    role: "system" | "user" | "assistant";
    content: ContentBlock[];
    source: MessageSource;
  };
  /** A user-role message: what additionalContexts carry. */
  export type UserMessage = Message & { role: "user" };
  /**
   * What deferContext takes: a whole UserMessage, or just its content (the
   * host gives it a fresh id and, without a source, the plugin as source).
   */
  export type ContextMessage = {
    content: ContentBlock[];
    source?: MessageSource;
  };

  // ---- Schemas: the value schema DSL -------------------------------------

  /** Annotations every DSL node may carry. */
  export type SchemaAnnotations = {
    description?: string;
    title?: string;
    default?: JsonValue;
    examples?: JsonValue;
  };
  export interface StringSchemaSpec extends SchemaAnnotations {
    type: "string";
    enum?: readonly string[];
    const?: string;
  }
  export interface NumberSchemaSpec extends SchemaAnnotations {
    type: "number";
    enum?: readonly number[];
    const?: number;
  }
  export interface IntegerSchemaSpec extends SchemaAnnotations {
    type: "integer";
    enum?: readonly number[];
    const?: number;
  }
  export interface BooleanSchemaSpec extends SchemaAnnotations {
    type: "boolean";
    enum?: readonly boolean[];
    const?: boolean;
  }
  export interface NullSchemaSpec extends SchemaAnnotations {
    type: "null";
    enum?: readonly null[];
    const?: null;
  }
  /** An array; without items, of any JSON values. */
  export interface ArraySchemaSpec extends SchemaAnnotations {
    type: "array";
    items?: ValueSchemaSpec;
  }
  /** An object; additionalProperties is mandatory. */
  export interface ObjectSchemaSpec extends SchemaAnnotations {
    type: "object";
    additionalProperties: boolean;
    properties?: ParameterSchemaSpec;
  }
  /** Any lossless JSON value (author-only node kind). */
  export interface JsonSchemaSpec extends SchemaAnnotations {
    type: "json";
  }
  /** Exactly one of at least two branches. */
  export interface OneOfSchemaSpec extends SchemaAnnotations {
    oneOf: readonly [ValueSchemaSpec, ValueSchemaSpec, ...ValueSchemaSpec[]];
  }
  export type ValueSchemaSpec =
    | StringSchemaSpec
    | NumberSchemaSpec
    | IntegerSchemaSpec
    | BooleanSchemaSpec
    | NullSchemaSpec
    | ArraySchemaSpec
    | ObjectSchemaSpec
    | JsonSchemaSpec
    | OneOfSchemaSpec;
  /** A property of a parameter map or an object: a node that may be required. */
  export type PropertySchemaSpec = ValueSchemaSpec & { required?: true };
  /** A tool's parameters: a record of property nodes (the root is an open object). */
  export interface ParameterSchemaSpec {
    readonly [name: string]: PropertySchemaSpec;
  }

  /** The raw JSON Schema subset the engine enforces. */
  export type JsonSchema = {
    type?: "object" | "array" | "string" | "number" | "integer" | "boolean" | "null";
    oneOf?: JsonSchema[];
    properties?: { [name: string]: JsonSchema };
    required?: string[];
    additionalProperties?: boolean;
    items?: JsonSchema;
    enum?: JsonValue[];
    const?: JsonValue;
    description?: string;
    title?: string;
    default?: JsonValue;
    examples?: JsonValue;
  };

  // Type-level inference: literal enum and const narrow,
  // closed objects have exactly their keys, open ones are intersected with
  // Record<string, JsonValue>, required properties are not optional, and
  // inference stops at 16 container levels (JsonValue below).
  type Depth = [never, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
  type Simplify<T> = { [K in keyof T]: T[K] } & {};
  type RequiredKeys<P> = { [K in keyof P]-?: P[K] extends { required: true } ? K : never }[keyof P];
  type InferProperties<P, D extends number> = Simplify<
    { -readonly [K in RequiredKeys<P>]: InferValue<P[K], D> } & {
      -readonly [K in Exclude<keyof P, RequiredKeys<P>>]?: InferValue<P[K], D>;
    }
  >;
  type InferObject<S, D extends number> = S extends { properties: infer P }
    ? S extends { additionalProperties: false }
      ? InferProperties<P, D>
      : InferProperties<P, D> & Record<string, JsonValue>
    : S extends { additionalProperties: false }
      ? Record<string, never>
      : Record<string, JsonValue>;

  /** The TypeScript type of the values a ValueSchemaSpec accepts. */
  export type InferValue<S, D extends number = 16> = [D] extends [never]
    ? JsonValue
    : S extends { oneOf: readonly (infer B)[] }
      ? InferValue<B, Depth[D]>
      : S extends { const: infer C }
        ? C
        : S extends { enum: readonly (infer E)[] }
          ? E
          : S extends { type: "string" }
            ? string
            : S extends { type: "number" | "integer" }
              ? number
              : S extends { type: "boolean" }
                ? boolean
                : S extends { type: "null" }
                  ? null
                  : S extends { type: "array"; items: infer I }
                    ? InferValue<I, Depth[D]>[]
                    : S extends { type: "array" }
                      ? JsonValue[]
                      : S extends { type: "object" }
                        ? InferObject<S, Depth[D]>
                        : JsonValue;

  /** The TypeScript type of the arguments a ParameterSchemaSpec accepts. */
  export type InferArgs<P> = InferProperties<P, 16> & Record<string, JsonValue>;

  // ---- Executions --------------------------------------------------------

  /** The agent a call runs as, with its parent chain. */
  export type AgentRef = {
    readonly id: string;
    readonly parent?: AgentRef;
  };

  const executionToken: unique symbol;
  /** An opaque token standing for a calling execution: compare by identity only. */
  export interface ExecutionToken {
    readonly [executionToken]: true;
  }

  /**
   * The verified identity a call runs for: who holds the access token a
   * request to an OAuth-protected dsh serve carried. Frozen; never the
   * token itself.
   */
  export type Caller = {
    /** The token's subject ("sub"). */
    readonly subject: string;
    /** The OAuth client the token was issued to. */
    readonly clientId: string;
    /** The token's scopes (empty when it has none). */
    readonly scopes: readonly string[];
  };

  /**
   * Arguments as listeners and guards see them: the model's parsed
   * arguments, not validated against the tool's schema (usually an object;
   * check each value with typeof before trusting it).
   */
  export interface ToolArguments {
    readonly [key: string]: JsonValue | undefined;
  }

  /** A call as listeners, guards and observers see it; read-only. */
  export interface ToolExecution<Args = ToolArguments> {
    readonly callId: string;
    /** The outermost call's id (callId for a top-level call). */
    readonly rootCallId: string;
    /** The tool called. */
    readonly name: string;
    /** A deeply frozen snapshot of the arguments. */
    readonly arguments: Args;
    readonly agent: AgentRef | undefined;
    /** The calling execution of a nested call (tools.call). */
    readonly parent: ExecutionToken | undefined;
    /**
     * The verified caller (a served request's token), the same for nested
     * calls and run_code sub-calls; undefined for a call no verified token
     * started (dsh call, dsh run, stdio, a server without authorization) and
     * in tools/result observers.
     */
    readonly caller: Caller | undefined;
    /** Aborts when the call is cancelled. */
    readonly signal: AbortSignal;
  }

  /**
   * The execution a tools/execute wrapper sees: signal is writable (replace
   * it, call next(), restore it); the body still sees the caller's
   * cancellation fused in.
   */
  export interface ToolDispatchExecution<Args = ToolArguments> extends ToolExecution<Args> {
    signal: AbortSignal;
  }

  /** The execution a tool body gets. */
  export interface ToolRunContext<Args = ToolArguments> extends ToolExecution<Args> {
    /** Attaches a context message to this call's result (in call order). */
    deferContext(message: UserMessage | ContextMessage): void;
    /** Marks a success of this call as concluding the agent's turn. */
    concludeTurn(): void;
    /**
     * Reports how far the call is to whoever asked for progress (an MCP
     * client): progress (a finite number, increasing) out of total (a finite
     * number >= 0; absent or 0: unknown), with an optional message. Throws
     * on other arguments; does nothing once the call has settled.
     */
    progress(progress: number, total?: number, message?: string): void;
    /**
     * Asks the user behind the caller a question (MCP elicitation):
     * message, and schema, the JSON Schema of the answer's form (an object
     * whose properties are primitives; absent for a bare confirmation).
     * Resolves to the answer: content holds the form's values when action
     * is "accept", and is undefined otherwise. Other calls on the instance
     * run meanwhile. Throws on bad arguments; rejects with an Error when
     * nobody can be asked or asking fails (its message is the reason), with
     * this call's signal's reason when the call is cancelled meanwhile, and
     * with "exec.elicit(message, schema?): the call is over" once the call
     * has settled.
     */
    elicit<Content extends Record<string, string | number | boolean> = Record<string, string | number | boolean>>(
      message: string,
      schema?: ElicitationSchema,
    ): Promise<ElicitationAnswer<Content>>;
  }

  /** The form exec.elicit asks for: a JSON Schema object of primitives. */
  export type ElicitationSchema = {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
    [key: string]: unknown;
  };

  /** The user's answer to exec.elicit. */
  export type ElicitationAnswer<Content = Record<string, string | number | boolean>> =
    | { action: "accept"; content: Content | undefined }
    | { action: "decline" | "cancel"; content: undefined };

  // ---- Results -----------------------------------------------------------

  /** A coded failure's identity, e.g. {name: "ToolArgsError", code: "INVALID_ARGS"}. */
  export type ToolErrorInfo = {
    name: string;
    code: string;
    reason?: string;
  };
  export type ToolFailure = {
    /** The message, without an "Error: " prefix. */
    message: string;
    info?: ToolErrorInfo;
  };
  export type ToolSuccessResult<Value = JsonValue> = {
    isError: false;
    /** The canonical value the body returned (validated against output.schema). */
    value: Value;
    /** What the model sees. */
    content: ContentBlock[];
    /** Presentation metadata, when the tool has output.presentationMeta. */
    meta?: JsonValue;
    additionalContexts?: UserMessage[];
    concludesTurn?: true;
  };
  export type ToolFailureResult = {
    isError: true;
    error: ToolFailure;
    content: ContentBlock[];
    meta?: JsonValue;
    additionalContexts?: UserMessage[];
  };
  export type ToolResult<Value = JsonValue> = ToolSuccessResult<Value> | ToolFailureResult;

  /** What result presenters receive. */
  /**
   * What result presenters receive. A success of a tool with
   * output.presentationMeta always has its meta (typed by what that returns).
   */
  export type ToolResultSummary<Meta = JsonValue | undefined> =
    | { isError: false; content: ContentBlock[]; meta: Meta }
    | { isError: true; content: ContentBlock[]; meta?: JsonValue };

  // ---- Decisions ---------------------------------------------------------

  export type AllowDecision = {
    kind: "allow";
  };
  /** Refuses the call; reason becomes the failure's message, info its info. */
  export type DenyDecision = {
    kind: "deny";
    reason: string;
    info?: ToolErrorInfo;
  };
  /** Puts the call to the approval service (the user). */
  export type AskDecision = {
    kind: "ask";
    reason?: string;
    displayReason?: string;
  };
  /** Ends the call as aborted before dispatch. */
  export type CancelDecision = {
    kind: "cancel";
  };
  export type PreExecuteDecision = AllowDecision | DenyDecision | AskDecision | CancelDecision;

  /** Accepts the result, optionally replacing its content (only). */
  export type AcceptContentDecision = {
    kind: "accept";
    content?: ContentBlock[];
    value?: never;
    additionalContexts?: UserMessage[];
  };
  /** Accepts the success with another value: revalidated and re-rendered. */
  export type AcceptValueDecision = {
    kind: "accept";
    value: JsonValue;
    content?: never;
    additionalContexts?: UserMessage[];
  };
  /** Turns the result into a failure whose content is feedback. */
  export type BlockDecision = {
    kind: "block";
    feedback: ContentBlock[];
    additionalContexts?: UserMessage[];
  };
  export type PostExecuteDecision = AcceptContentDecision | AcceptValueDecision | BlockDecision;

  /** A guard denies with a reason string; undefined abstains. There is no allow. */
  export type GuardDecision = string | undefined;

  // ---- Presentation cards ------------------------------------------------

  export type ToolCallKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "fetch" | "other";
  /** A file (and optional 1-based line) a call reads or changes. */
  export type FileLocation = {
    path: string;
    line?: number;
  };
  /** A change to one file; oldText is null for a new file or without a before-image. */
  export type FileDiff = {
    path: string;
    oldText: string | null;
    newText: string;
  };
  /** One line of a file, numbered from 1. */
  export type ReadFileLine = {
    number: number;
    text: string;
  };
  export type SearchLineMatch = {
    lineNumber: number;
    line: string;
  };
  export type SearchFileMatches = {
    path: string;
    matches: SearchLineMatch[];
  };
  export type WebSource = {
    url: string;
    title?: string;
    snippet?: string;
    publishedAt?: string;
  };

  export type GenericCallView = {
    card: "generic";
    title: string;
    kind?: ToolCallKind;
    rawInput?: JsonValue;
    content?: ContentBlock[];
    locations?: FileLocation[];
  };
  /** A shell command: title is the command. */
  export type TerminalCallView = {
    card: "terminal";
    title: string;
    description?: string;
    cwd?: string;
  };
  export type DiffCallView = {
    card: "diff";
    title: string;
    diffs: FileDiff[];
    locations?: FileLocation[];
  };
  /** How a pending call is presented. */
  export type ToolCallView = GenericCallView | TerminalCallView | DiffCallView;

  export type GenericResultView = {
    card: "generic";
    title?: string;
    content?: ContentBlock[];
  };
  export type TerminalResultView = {
    card: "terminal";
    title?: string;
    output?: string;
    exitCode?: number;
    signal?: string;
  };
  export type DiffResultView = {
    card: "diff";
    title?: string;
    diffs: FileDiff[];
  };
  /** Grouped content matches (grep). total counts matches found before capping. */
  export type SearchMatchesResultView = {
    card: "search";
    shape: "matches";
    title?: string;
    files: SearchFileMatches[];
    truncated: boolean;
    total: number;
  };
  /** A flat list of paths (glob, list). total counts paths found before capping. */
  export type SearchPathsResultView = {
    card: "search";
    shape: "paths";
    title?: string;
    paths: string[];
    truncated: boolean;
    total: number;
  };
  export type ReadResultView = {
    card: "read";
    title?: string;
    path: string;
    /** The first line the window asked for. */
    offset: number;
    lines: ReadFileLine[];
    totalLines: number;
    /** A syntax-highlighting hint. */
    lang?: string;
    content?: ContentBlock[];
  };
  export type WebSearchResultView = {
    card: "web";
    kind: "search";
    title?: string;
    sources: WebSource[];
    answer?: string;
    truncated: boolean;
  };
  export type WebFetchResultView = {
    card: "web";
    kind: "fetch";
    title?: string;
    /** The final URL, after redirects. */
    url: string;
    statusCode: number;
    truncated: boolean;
  };
  /** How a completed call is presented. */
  export type ToolResultView =
    | GenericResultView
    | TerminalResultView
    | DiffResultView
    | SearchMatchesResultView
    | SearchPathsResultView
    | ReadResultView
    | WebSearchResultView
    | WebFetchResultView;

  // ---- Tool definitions --------------------------------------------------

  /** What the model sees of a tool. */
  export type ToolSchema = {
    name: string;
    description: string;
    parameters: JsonSchema;
  };

  export interface ToolOutput<Args = any, Value = any, Meta = any> {
    /** The value's JSON Schema: every success is validated against it. */
    schema: JsonSchema;
    /** The content the model sees for a value. */
    render(args: Args, value: Value): ContentBlock[];
    /** Presentation metadata (the result's meta) for a value. */
    presentationMeta?(args: Args, value: Value): Meta;
  }

  /**
   * A registrable tool: what defineTool returns, or a raw definition with a
   * raw JSON Schema (registered without argument validation).
   */
  export interface ToolDefinition<Args = any, Value = any, Meta = any> extends ToolSchema {
    output: ToolOutput<Args, Value, Meta>;
    /** Returns the canonical JSON value only. */
    execute(args: Args, exec: ToolRunContext<Args>): Value | Promise<Value>;
    /** Rewrites the content of every outcome, exactly once; synchronous and total. */
    finalizeContent?(exec: ToolExecution<Args | undefined>, result: ToolResult<Value>): ContentBlock[] | undefined;
    /** Replaces the content of an outcome entering post-execute. */
    projectContent?(exec: ToolExecution<Args | undefined>, result: ToolResult<Value>): ContentBlock[] | undefined;
    /** Enforced by the host's timeout wrapper. */
    timeoutMs?: number;
    /** Only an exact true lets the call run in parallel with others. */
    isConcurrencySafe?(args: Args): boolean;
    presentCall?(args: Args): ToolCallView | undefined;
    presentResult?(args: Args, result: ToolResultSummary<Meta>): ToolResultView | undefined;
  }

  /** defineTool's options: the DSL's specs instead of raw schemas. */
  export interface ToolOptions<P extends ParameterSchemaSpec, O extends ValueSchemaSpec, M extends JsonValue | undefined = undefined> {
    name: string;
    description: string;
    parameters?: P;
    output: {
      schema: O;
      render(args: InferArgs<P>, value: InferValue<O>): ContentBlock[];
      /** The result's meta: data for presentResult's card. */
      presentationMeta?(args: InferArgs<P>, value: InferValue<O>): M;
    };
    /** Runs with arguments already validated against parameters. */
    execute(args: InferArgs<P>, exec: ToolRunContext<InferArgs<P>>): InferValue<O> | Promise<InferValue<O>>;
    /** Receives raw executions and results: invalid-input failures reach it too. */
    finalizeContent?(exec: ToolExecution, result: ToolResult<InferValue<O>>): ContentBlock[] | undefined;
    projectContent?(exec: ToolExecution, result: ToolResult<InferValue<O>>): ContentBlock[] | undefined;
    /** A positive finite number of milliseconds. */
    timeoutMs?: number;
    /** Not called for invalid arguments (they are never concurrency-safe). */
    isConcurrencySafe?(args: InferArgs<P>): boolean;
    /** Not called for invalid arguments (they have no view). */
    presentCall?(args: InferArgs<P>): ToolCallView | undefined;
    presentResult?(args: InferArgs<P>, result: ToolResultSummary<M>): ToolResultView | undefined;
  }

  /**
   * The design's defineTool: compiles parameters and output.schema with the
   * DSL and validates arguments before execute. A bad spec throws a
   * JsonSchemaError with the DSL's message.
   */
  export function defineTool<
    const P extends ParameterSchemaSpec = {},
    const O extends ValueSchemaSpec = ValueSchemaSpec,
    M extends JsonValue | undefined = undefined,
  >(options: ToolOptions<P, O, M>): ToolDefinition<InferArgs<P>, InferValue<O>, M>;

  // ---- Errors ------------------------------------------------------------

  /**
   * Errors the host throws or rejects with carry a name and, when coded, a
   * code: JsonSchemaError/UNSUPPORTED_SCHEMA, or a capability module's code
   * such as ENOENT.
   */
  export interface CodedError extends Error {
    code: string;
  }

  // ---- tools.* -----------------------------------------------------------

  export type Disposer = () => void;

  /** What a when condition receives. */
  export interface WhenContext {
    agent?: AgentRef;
    modelSelection?: JsonValue;
    signal: AbortSignal;
  }
  export interface RegisterOptions {
    /** Activates the registration conditionally, for each step's tool set. */
    when?(context: WhenContext): boolean | Promise<boolean>;
  }

  /** A deny-only guard: a reason string denies, undefined abstains. */
  export type Guard = (exec: ToolExecution) => GuardDecision | Promise<GuardDecision>;

  export type ToolFilter = {
    allow?: string[];
    deny?: string[];
  };

  /** The registry operations of one scope. */
  export interface ToolsView {
    /** Registers a tool; returns a disposer. */
    register(definition: ToolDefinition<any, any>, options?: RegisterOptions): Disposer;
    guard(guard: Guard): Disposer;
    /** Narrows the tools a scoped agent sees (scoped views only). */
    restrict(filter: ToolFilter): Disposer;
    /** The visible tool's schema, or undefined. */
    get(name: string): ToolSchema | undefined;
    schemas(): ToolSchema[];
    /**
     * A nested call for composite tools: a full pipeline call whose parent is
     * parentExec (its token, root call id, agent and current signal).
     */
    call(name: string, args: JsonValue, parentExec: ToolExecution<any>): Promise<ToolResult>;
  }
  /** tools.scope(agentId): the same operations and an on, in that agent's scope. */
  export interface ScopedTools extends ToolsView {
    on: On;
  }
  export interface Tools extends ToolsView {
    scope(agentId: string): ScopedTools;
  }
  export const tools: Tools;

  // ---- on(event, ...) ----------------------------------------------------

  export interface ListenerOptions {
    /** Makes the listener outermost. */
    prepend?: boolean;
  }

  export type PreExecuteListener = (
    exec: ToolExecution,
    next: () => Promise<PreExecuteDecision>,
  ) => PreExecuteDecision | Promise<PreExecuteDecision>;
  export type ExecuteWrapper = (
    exec: ToolDispatchExecution,
    next: () => Promise<ToolResult>,
  ) => ToolResult | Promise<ToolResult>;
  export type PostExecuteListener = (
    exec: ToolExecution,
    result: ToolResult,
    next: () => Promise<PostExecuteDecision>,
  ) => PostExecuteDecision | Promise<PostExecuteDecision>;
  /**
   * Sees every final result (frozen); cannot alter it. It alone also sees
   * calls whose arguments were not lossless JSON (exec.arguments undefined).
   */
  export type ResultObserver = (exec: ToolExecution<ToolArguments | undefined>, result: ToolResult) => void | Promise<void>;

  export type ToolChange = {
    kind: "register" | "dispose" | "restrict" | "lift" | "swap";
    /** The agent's id for a scoped change; absent for the global layer. */
    agent?: string;
    /** The tool, for register and dispose. */
    name?: string;
  };
  export type ChangeObserver = (change: ToolChange) => void | Promise<void>;

  /** One settled sub-call of a run_code program, for its dispatch log. */
  export interface DispatchLogEntry {
    exec?: ToolExecution;
    agent?: AgentRef;
    subCallId: string;
    name: string;
    isError: boolean;
    content: ContentBlock[];
  }
  export type DispatchLogListener = (
    entry: DispatchLogEntry,
    next: () => Promise<ContentBlock[]>,
  ) => ContentBlock[] | Promise<ContentBlock[]>;

  export interface On {
    /** Decide allow, deny, ask or cancel before a call runs; fail closed on a throw. */
    (event: "tools/pre-execute", listener: PreExecuteListener, options?: ListenerOptions): Disposer;
    /** Wrap dispatch (timeouts, retries, caching). */
    (event: "tools/execute", listener: ExecuteWrapper, options?: ListenerOptions): Disposer;
    /** Accept, replace or block a result before the model sees it. */
    (event: "tools/post-execute", listener: PostExecuteListener, options?: ListenerOptions): Disposer;
    (event: "tools/result", listener: ResultObserver, options?: ListenerOptions): Disposer;
    (event: "tools/change", listener: ChangeObserver): Disposer;
    (event: "tools/ptc-dispatch-log", listener: DispatchLogListener, options?: ListenerOptions): Disposer;
  }
  /** Listens to a pipeline event; returns a disposer. */
  export const on: On;

  // ---- log, instances ----------------------------------------------------

  export interface Logger {
    debug(message: string, fields?: { [key: string]: JsonValue }): void;
    info(message: string, fields?: { [key: string]: JsonValue }): void;
    warn(message: string, fields?: { [key: string]: JsonValue }): void;
    error(message: string, fields?: { [key: string]: JsonValue }): void;
  }
  /**
   * Structured logs into the host's slog, tagged with the plugin; a line
   * logged for a call (its body, listeners, code after their awaits, timers
   * they set) carries that call's context, so a client of the call may see it.
   */
  export const log: Logger;

  /**
   * Runs n copies of the plugin for CPU-parallel concurrency-safe tools
   * (same as `export const instances = n`); every copy must register the
   * same tools.
   */
  export function instances(n: number): void;

  const dsh: {
    defineTool: typeof defineTool;
    tools: Tools;
    on: On;
    log: Logger;
    instances: typeof instances;
  };
  export default dsh;
}

// ---------------------------------------------------------------------------
// Capability modules. Paths are workspace-relative POSIX strings; a path that
// resolves outside the workspace (through .. or a symlink) is refused with
// EOUTSIDE. Every function with options takes a signal in them; failures reject
// with a coded Error (err.code: ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY,
// EACCES, EOUTSIDE, ETOOBIG, ETIMEDOUT, ECANCELED, EINVAL, EBINARY,
// EHOSTDENIED, EREDIRECT, EHTTP, ENOEXEC).

declare module "dsh/fs" {
  export type Encoding = "utf8" | "base64";

  export interface Cancellable {
    signal?: AbortSignal;
  }
  export interface ReadTextOptions extends Cancellable {
    encoding?: "utf8";
    /** The first line to return, 0-based. */
    offset?: number;
    /** How many lines to return (default all). */
    limit?: number;
  }
  export interface ReadBinaryOptions extends Cancellable {
    encoding: "base64";
  }
  export type TextFile = {
    path: string;
    encoding: "utf8";
    content: string;
    /** The file's size in bytes. */
    size: number;
    /** Whether lines after the window were left out. */
    truncated: boolean;
    /** The 0-based index of the first line returned. */
    offset: number;
    /** How many lines were returned. */
    lineCount: number;
    totalLines: number;
  };
  export type BinaryFile = {
    path: string;
    encoding: "base64";
    content: string;
    size: number;
    truncated: boolean;
  };
  /** Reads a file: utf8 (EBINARY for non-UTF-8 data) with a line window, or base64. */
  export function readFile(path: string, options?: ReadTextOptions): Promise<TextFile>;
  export function readFile(path: string, options: ReadBinaryOptions): Promise<BinaryFile>;

  export interface WriteFileOptions extends Cancellable {
    encoding?: Encoding;
    /** Creates missing parent directories. */
    createDirs?: boolean;
    append?: boolean;
  }
  export type WriteFileResult = {
    path: string;
    size: number;
    /** Whether the file did not exist before. */
    created: boolean;
  };
  export function writeFile(path: string, data: string, options?: WriteFileOptions): Promise<WriteFileResult>;

  export type EntryType = "file" | "dir" | "symlink" | "other";
  export type Stat = {
    path: string;
    /** lstat: a symlink reports "symlink". */
    type: EntryType;
    size: number;
    /** Permission bits. */
    mode: number;
    mtimeMs: number;
  };
  /** Quick; its only option is the signal every dsh/fs function takes. */
  export function stat(path: string, options?: Cancellable): Promise<Stat>;

  export type DirEntry = {
    name: string;
    type: EntryType;
    size: number;
  };
  export interface ReadDirOptions extends Cancellable {
    /** At most this many entries (default 1000). */
    limit?: number;
  }
  export type DirListing = {
    path: string;
    /** Sorted by name. */
    entries: DirEntry[];
    total: number;
    truncated: boolean;
  };
  export function readDir(path: string, options?: ReadDirOptions): Promise<DirListing>;

  export interface GlobOptions extends Cancellable {
    /** A directory inside the workspace the pattern is relative to. */
    cwd?: string;
    limit?: number;
  }
  export type GlobResult = {
    /** Sorted, workspace-relative (or cwd-relative). */
    paths: string[];
    total: number;
    truncated: boolean;
  };
  /** Doublestar globbing: **, *, ?, [abc], {a,b}; never follows symlinks out. */
  export function glob(pattern: string, options?: GlobOptions): Promise<GlobResult>;

  export interface MkdirOptions extends Cancellable {
    recursive?: boolean;
  }
  export function mkdir(path: string, options?: MkdirOptions): Promise<{ path: string; created: boolean }>;

  export interface RemoveOptions extends Cancellable {
    recursive?: boolean;
  }
  export function remove(path: string, options?: RemoveOptions): Promise<{ path: string; removed: boolean }>;
}

declare module "dsh/process" {
  export interface RunOptions {
    /** A directory inside the workspace (default the workspace). */
    cwd?: string;
    /** Set on top of a minimal inherited environment (PATH, HOME, LANG, TMPDIR). */
    env?: { [name: string]: string };
    stdin?: string;
    /** On timeout the process group is killed and the result has timedOut: true. */
    timeoutMs?: number;
    /** Cancelling kills the process group and rejects with ECANCELED. */
    signal?: AbortSignal;
  }
  export type RunResult = {
    stdout: string;
    stderr: string;
    /** null when the process was killed by a signal. */
    exitCode: number | null;
    /** The signal that ended it, e.g. "SIGKILL". */
    signal: string | null;
    /** Whether output past the cap was dropped. */
    truncated: boolean;
    timedOut: boolean;
    /** The full size of each stream, kept or not. */
    stdoutBytes: number;
    stderrBytes: number;
  };
  /** Runs argv (no shell) in its own process group; output is capped. */
  export function run(argv: string[], options?: RunOptions): Promise<RunResult>;
}

declare module "dsh/http" {
  export interface FetchOptions {
    method?: string;
    headers?: { [name: string]: string };
    body?: string;
    timeoutMs?: number;
    signal?: AbortSignal;
  }
  export type FetchResponse = {
    status: number;
    statusText: string;
    /** The final URL, after redirects. */
    url: string;
    /** Lower-case names, sorted; repeated values joined by ", ". */
    headers: { [name: string]: string };
    /** UTF-8 text (invalid bytes replaced). */
    body: string;
    /** Whether the body was cut at the size cap. */
    truncated: boolean;
  };
  /** http and https only; the host must be on the allow-list (EHOSTDENIED). */
  export function fetch(url: string, options?: FetchOptions): Promise<FetchResponse>;
}

declare module "dsh/path" {
  // POSIX semantics (Node's path.posix); synchronous.
  export function join(...parts: string[]): string;
  export function dirname(path: string): string;
  export function basename(path: string, ext?: string): string;
  export function ext(path: string): string;
  export function relative(from: string, to: string): string;
  export function isAbsolute(path: string): boolean;
}
