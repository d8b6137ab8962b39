# dsh — the commands a developer and CI run. Needs only Go (and gcc for -race).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

# staticcheck 2026.2.2; the latest release listed by
# `go list -m -versions honnef.co/go/tools` when it was pinned.
STATICCHECK_VERSION := v0.8.2
# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 10s
# Runs per benchmark for `make bench` (benchstat wants several).
BENCHCOUNT ?= 6

BIN := bin
DSH := $(abspath $(BIN)/dsh)
EXAMPLES := scripts/examples/schemas

.PHONY: test demo demo-schema bench fuzz lint build

## test: go vet, then every test with the race detector, then one line on the
## JSON-Schema-Test-Suite: its counts when DSH_JSON_SCHEMA_TEST_SUITE names the
## suite's folder (.ci/run sets it), else that it was skipped and why.
# ./tests/ comes first: go test starts packages' tests in the order given,
# and the end-to-end tests are the longest by far, so the others run beside
# them instead of before them. The race runtime sleeps a second as a
# race-built program exits (GORACE atexit_sleep_ms; reports are printed as
# races happen, and the exit status still says so): the test binaries, and
# the ones tests run as commands, skip it. DSH_TEST_TIMESCALE=N stretches
# the tests' timing budgets N times on a slow machine (internal/testtime).
# scripts/npm-setup.sh installs tests/npm's packages (the TypeScript MCP SDK,
# reference servers, conformance suite) in a cache folder when npm is there,
# for the MCP end-to-end tests (DSH_MCP_SERVERS, DSH_MCP_CONFORMANCE; values
# already set win); without it they skip. -timeout 30m: ./tests/ drives
# real MCP servers and the conformance suite, past go test's default 10
# minutes on a busy 2-core machine (about 5 on an idle one).
test: export GORACE := atexit_sleep_ms=0 $(GORACE)
test:
	go vet ./...
	npm=$$(scripts/npm-setup.sh); \
	export DSH_MCP_SERVERS="$${DSH_MCP_SERVERS:-$$npm}" DSH_MCP_CONFORMANCE="$${DSH_MCP_CONFORMANCE:-$$npm}"; \
	go test -race -timeout 30m ./tests/ ./...
	@go test -run '^TestJSONSchemaTestSuite$$' -v ./dsl/ | grep '^JSON-Schema-Test-Suite'

## build: the dsh binary in bin/.
build:
	go build -o $(BIN)/dsh ./cmd/dsh

# Shell functions for the demo's recipe lines ("@$(DEMO_SH) step ...").
# step EXPECTED ARGS...: print "$ dsh ARGS..." and run it in $(EXAMPLES) with
# stderr merged into stdout; print the exit status, and stop the demo only when
# it differs from EXPECTED (the failing steps are meant to fail). With STDIN
# set, its text is piped in and shown as "echo '...' |".
# show FILE: print "$ cat FILE" and the file.
DEMO_SH = step() { \
	want=$$1; shift; \
	if [ -n "$${STDIN-}" ]; then printf "$$ echo '%s' | dsh %s\n" "$$STDIN" "$$*"; \
	else printf '$$ dsh %s\n' "$$*"; fi; \
	status=0; \
	( cd $(EXAMPLES) && $(DSH) "$$@" 2>&1 <<<"$${STDIN-}" ) || status=$$?; \
	printf '[exit status %s]\n' "$$status"; \
	if [ "$$status" != "$$want" ]; then echo "demo: expected exit status $$want" >&2; exit 1; fi; \
}; \
show() { printf '$$ cat %s\n' "$$1"; cat $(EXAMPLES)/$$1; };

## demo: a model's tool calls (scripts/examples/demo.calls.json) through the
## example plugins, in a fresh temporary workspace: the cards, the session
## log and its replay (which must draw the same cards). The tools are in
## JavaScript, TypeScript and Lua (scripts/examples/demo/text_stats.lua).
demo: build
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; mkdir "$$tmp/ws"; \
	flags=(--scripts scripts/examples/plugins --scripts scripts/examples/demo --workspace "$$tmp/ws"); \
	echo '$$ dsh --scripts scripts/examples/plugins --scripts scripts/examples/demo --workspace $$WS --approve allow --log session.jsonl run scripts/examples/demo.calls.json'; \
	$(DSH) "$${flags[@]}" --approve allow --log "$$tmp/session.jsonl" run scripts/examples/demo.calls.json | tee "$$tmp/live.txt"; \
	echo; echo "session.jsonl: $$(wc -l <"$$tmp/session.jsonl") events, a tool/call and a tool/result per call; the first two:"; \
	cut -c 1-100 "$$tmp/session.jsonl" | head -n 2 | sed 's/$$/…/'; \
	$(DSH) "$${flags[@]}" replay "$$tmp/session.jsonl" 2>/dev/null | cmp -s - "$$tmp/live.txt"; \
	echo '$$ dsh replay session.jsonl    # draws the same cards (checked)'

## demo-schema: the schema commands, step by step, on the example schemas.
demo-schema: build
	@echo "dsh demo: the schema commands on the example tool schemas in $(EXAMPLES)/"
	@echo "(commands run in that directory; exit status 0 = clean, 1 = violations, 2 = trouble)"
	@echo
	@echo "== 1. The binary and its version"
	@$(DEMO_SH) step 0 version
	@echo
	@echo "== 2. Schemas inside the supported subset: 'schema check' prints nothing, exit 0"
	@$(DEMO_SH) step 0 schema check read_file.args.schema.json read_file.result.schema.json search.args.schema.json
	@echo
	@echo "== 3. A schema outside the subset (pattern, minimum, a type array, anyOf, a bad enum,"
	@echo "      required naming an undeclared property) beside a valid one: one line per"
	@echo "      violation, named by file; the valid file prints nothing; exit 1"
	@$(DEMO_SH) step 1 schema check read_file.args.schema.json fetch_url.args.unsupported.schema.json
	@echo
	@echo "== 4. Tool-call arguments that fit read_file's parameters: no output, exit 0"
	@$(DEMO_SH) show read_file.args.valid.json
	@$(DEMO_SH) step 0 schema validate --args read_file.args.schema.json read_file.args.valid.json
	@echo
	@echo "== 5. Arguments that do not: each violation, paths from the implicit arguments root, exit 1"
	@$(DEMO_SH) show read_file.args.invalid.json
	@$(DEMO_SH) step 1 schema validate --args read_file.args.schema.json read_file.args.invalid.json
	@echo
	@echo "== 6. A tool result against a closed object schema (additionalProperties: false),"
	@echo "      paths from the value root, exit 1"
	@$(DEMO_SH) show read_file.result.invalid.json
	@$(DEMO_SH) step 1 schema validate read_file.result.schema.json read_file.result.invalid.json
	@echo
	@echo "== 7. Nested paths, an enum, a closed nested object and a oneOf, exit 1"
	@$(DEMO_SH) show search.args.invalid.json
	@$(DEMO_SH) step 1 schema validate --args search.args.schema.json search.args.invalid.json
	@echo
	@echo "== 8. The value from standard input ('-'); the root itself must be an object, exit 1"
	@$(DEMO_SH) STDIN='["README.md"]' step 1 schema validate --args read_file.args.schema.json -
	@echo
	@echo "== 9. Validating against a schema outside the subset is refused: its violations, exit 2"
	@$(DEMO_SH) step 2 schema validate --args fetch_url.args.unsupported.schema.json read_file.args.valid.json
	@echo
	@echo "Demo done: every step exited with the status it was meant to."

## bench: every benchmark, $(BENCHCOUNT) runs each, also written to bench.txt (benchstat input).
bench:
	go test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) ./... | tee bench.txt

## fuzz: each fuzz target of each package for $(FUZZTIME) (go test -fuzz takes one target a run).
fuzz:
	@for pkg in $$(go list ./...); do \
		list=$$(go test -list '^Fuzz' "$$pkg"); \
		targets=$$(grep '^Fuzz' <<<"$$list" || true); \
		for target in $$targets; do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			go test -run "^$$target\$$" -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done

## lint: go vet and staticcheck (pinned, run with go run).
lint:
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
