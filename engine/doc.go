// Package engine executes an agent's tool calls: the registry of tools and
// scopes, the policy waterfalls, the one-call pipeline and the batch
// scheduler. docs/architecture.md places it among dsh's packages, and
// docs/behaviour.md gives the behaviour it pins down, message by message.
//
// # Using it
//
// [New] returns a [Service]. Tools, restrictions, guards and listeners are
// registered through a [Scope]: [Service.Global] for the global layer,
// [Service.Scope] for one [Agent]'s. A scope owns what it registers, and
// [Scope.Dispose] removes it all, as disposing a plugin does. [Service.Call]
// runs one call through the pipeline; [Scope.Execute] runs an assistant
// step's batch through the scope's [Executor] (the [NativeExecutor] unless
// [Scope.SetExecutor] chose another).
//
// A tool is a [Definition]: its model-facing schema, its mandatory output
// contract (a schema, a renderer, optionally presentation metadata) and its
// body. Policies are [PreExecuteFunc] (allow, deny, ask, cancel),
// [ExecuteFunc] wrappers around dispatch (net/http-style middleware whose
// next takes a ctx), [PostExecuteFunc] (accept, replace, block) and
// [GuardFunc]. Tool failures are [Result]s, never Go errors; Go errors are
// for contract misuse, such as a bad registration.
//
// # Go forms of the design's words
//
//   - An AbortSignal is a context.Context. A tools/execute wrapper replaces
//     the signal by passing another ctx to next; the body receives the
//     caller's ctx fused with it. Post-execute always sees the caller's.
//   - A throw is a returned error, or a panic in listener or tool code: the
//     engine recovers it and treats it alike. A coded error ([CodedError],
//     such as [ToolError]) keeps its name and code as the failure's info.
//   - "Frozen" values are detached snapshots (package dsl): arguments,
//     values, content and metadata are copied at every boundary. Results and
//     executions handed to listeners are shared and must not be modified.
//   - Optional keys of the design ("meta", "additionalContexts") are absent in
//     [Result.JSON] when unused; in Go, HasMeta and a nil slice say so.
//
// # Choices where the spec is silent
//
//   - Content blocks are typed ([TextBlock], [ToolCallBlock] …) when a
//     block has exactly a known shape, and a [RawBlock] otherwise, so that
//     unknown types and odd shapes round-trip unchanged.
//   - A guard denies by returning a non-empty reason; "" abstains.
//   - Definition.Timeout is a time.Duration: zero means none, negative is
//     refused with the spec's timeoutMs message.
//   - A duplicate global tool's message names the script API, as the spec's
//     prose does: "register through that agent's scope, `tools.scope(id)`,
//     instead". Restrict from the global scope keeps the upstream literal,
//     "requires a scoped context (agent.ctx)".
//   - A tools/pre-execute decision carrying fields its kind does not take, or
//     an unknown kind, fails closed like a throwing listener; so does a
//     post-execute decision of an unknown kind.
//   - A throwing content projector (ProjectContent) is a pipeline failure:
//     the call's result is that error, and finalizeContent still runs.
//   - Tool names follow one rule, ^[a-zA-Z0-9_-]{1,64}$ ([CheckToolName]),
//     checked first at registration (before §2.2's steps, whose messages
//     quote the name): `tool name "a.b" is invalid: a tool name is 1 to 64
//     ASCII letters, digits, '_' or '-'`. Every registered name is thus
//     short and printable. A name from outside (a model's call, a
//     restriction's list, a call id) is quoted in messages by
//     internal/display: escaped as %q does, cut to 64 bytes with "…"; a
//     restriction's error lists at most 10 unknown names ("and N more").
//   - What a call hands on is bounded where it is made: a call defers at
//     most [MaxDeferredMessages] (1,000) context messages of at most
//     [MaxDeferredBytes] (64 MiB) in all, [Run.DeferContext] failing past
//     either; a progress report's and a question's message is cut to
//     [MaxProgressMessage] (16 KiB); a [JSONLLog] line is at most
//     [MaxLogLine] (64 MiB), a longer event written cut and marked
//     ([LogCutKey]). A cut text ends with "… (truncated)".
//
// # Nested calls
//
// A call made from inside another (a tool body's or a listener's
// tools.call, a PTC sub-call) passes the calling execution's token as
// [Input.Parent]. The engine bounds nesting for every host at once, Go, JS
// and Lua alike: a call whose chain from the root call to itself is longer
// than [MaxNestingDepth] (64, the Lua host's per-instance bound) fails with
// "tool calls are nested more than 64 deep", and the calls nested under one
// root call, at every depth together, share a budget of [NestedCallBudget]
// (1,000): past it, each fails with `the call "<root call id>" made more
// than 1000 nested tool calls` (the id shortened to 64 bytes). Both are
// ToolNestingError / [CodeNestingLimit] failures, made at creation like the
// other early failures: no policy, guard or body runs for such a call, its
// finalizer and tools/result observers do. So a listener that calls the tool
// it guards, or a fan-out of 8 calls per level, ends quickly as a failed
// nested call that its caller sees as a result. [WithMaxNestingDepth] and
// [WithNestedCallBudget] change the bounds. A call made with
// [Input.OwnBudget] (a PTC sub-call, which ptc bounds per run) does not
// count against its root's budget and roots a fresh one for the calls
// nested under it; its depth still counts.
//
// # Hot reload
//
// [Service.Swap] applies a set of changes (a plugin's old version disposed,
// its new version registered) as one: each call belongs to the epoch it
// began in and sees that epoch's tools, guards and listeners to its end, so
// no call sees a mix of versions or neither. The registry is copy-on-write
// (reading it takes no lock); listeners added or removed inside a swap carry
// the epoch from which they are, or stop being, visible. Ordinary changes
// outside a swap behave as before: every call sees them at once, and a
// table's iteration stays live. [Service.Drain] waits for an ended epoch's
// calls, after which what the swap removed is forgotten.
//
// Keeping its epoch to its end is a deliberate departure from the
// reference's live re-resolution inside a call: a call re-resolves its tool
// (at the body, and when a result is rebuilt) only within its own epoch's
// registry, so a hot reload never hands it a mix of versions. Between calls
// nothing is pinned: each call of a batch resolves its tool, and joins the
// current epoch, at its own start, so a tool that an earlier call of the
// batch registered or replaced serves the later ones. A step's [ToolSet]
// fixes only the outcome of the activation conditions ([When]): an
// unconditional registration is usable whenever it is visible, and a
// conditional one made after the step was resolved waits for the next step.
//
// # Telemetry
//
// The engine speaks OpenTelemetry through its API only; the deployment
// brings the SDK. [WithTracerProvider] traces every call: an
// "execute_tool <name>" span (the GenAI conventions' gen_ai.* attributes,
// error.type and dsh.error.code on failure) under the span of the ctx it
// was called with, so a nested call's and a PTC sub-call's span is a child
// of its caller's; a "dsh.policy <stage>" child span per policy stage that
// ran (pre-execute, guard, execute, post-execute, project, finalize) with
// the listener's plugin ([Source]; a script host gives its plugin's file)
// and decision; and spans for approvals and elicitations with their outcome
// and wait. [WithMeterProvider] records the gen_ai.execute_tool.duration
// histogram and the dsh.policy.decisions counter. docs/tracing.md lists
// every name and attribute.
//
// Both are off by default, and off costs nothing but a nil check per stage:
// no allocation, no clock read. On, a stage span's name and start options
// are made once, and its attributes live in the allocation that holds the
// stage; a tool's span name and constant attributes, and the metrics'
// attribute sets, are cached per tool, plugin and outcome, at most 1,024
// of each (past that they are made per call). What a span records is
// bounded: names and ids are cut to 256 bytes, and arguments and results
// are recorded only with [WithContentCapture] (the deployment reads
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT once, when it creates
// the Service, not per call), each cut to [MaxCapturedContent] (4 KiB). The
// duration metric names a tool only when the call resolved it (an unknown
// name, which the model chose, counts as _OTHER), so its cardinality is
// that of the registry.
package engine
