package cli

import (
	"strings"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// card is one call as the human output shows it: what the tool's
// presenters made of its arguments and result, and the result itself.
type card struct {
	callID string
	name   string
	call   *engine.CallView   // nil: the tool presents no call view
	result *engine.ResultView // nil: no result view
	// hasResult is false for a call that started but never committed
	// (the batch failed).
	hasResult bool
	isError   bool
	content   []engine.Block
	code      string // a coded failure's code
}

// cardSource is one call of a session: its tool/call record, and its
// tool/result record once committed.
type cardSource struct {
	call   record
	result *record
}

// sources pairs the tool/call and tool/result records of a session (a
// tool/result cites its tool/call by callEvent), in commit order: a call's
// card comes when its result does, so cards follow model order. Calls with
// no result come last, in start order. Other events (tool/ptc-dispatch…)
// are not cards.
func sources(recs []record) []cardSource {
	calls := map[string]int{} // tool/call id -> index in open
	var open []*cardSource
	var out []cardSource
	for _, r := range recs {
		switch r.typ {
		case engine.EventToolCall:
			calls[r.id] = len(open)
			open = append(open, &cardSource{call: r})
		case engine.EventToolResult:
			i, ok := calls[r.str("callEvent")]
			if !ok || open[i] == nil {
				continue
			}
			src := open[i]
			open[i] = nil
			res := r
			src.result = &res
			out = append(out, *src)
		}
	}
	for _, src := range open {
		if src != nil {
			out = append(out, *src)
		}
	}
	return out
}

// schedule reads how the calls ran from the order of their records: a
// group is a maximal run of calls that were started while an earlier one
// of the group had not committed (a parallel group), or a single call (an
// exclusive barrier, or a parallel call that ran alone). It returns the
// call ids of each group. The calls aborted before dispatch (skipped after
// an interrupt, or cancelled before their body started) did not run: they
// are left out of the groups and returned apart, in the order of their
// tool/call records.
func schedule(recs []record) (groups [][]string, notRun []string) {
	skipped := map[string]bool{} // the tool/call ids of calls aborted before dispatch
	for _, r := range recs {
		if r.typ == engine.EventToolResult && r.errorCode() == engine.CodeAbortedBeforeDispatch {
			skipped[r.str("callEvent")] = true
		}
	}
	var group []string
	open := map[string]bool{}
	for _, r := range recs {
		if r.observed {
			continue
		}
		switch r.typ {
		case engine.EventToolCall:
			if skipped[r.id] {
				notRun = append(notRun, r.str("callId"))
				continue
			}
			open[r.id] = true
			group = append(group, r.str("callId"))
		case engine.EventToolResult:
			if skipped[r.str("callEvent")] {
				continue
			}
			delete(open, r.str("callEvent"))
			if len(open) == 0 && len(group) > 0 {
				groups = append(groups, group)
				group = nil
			}
		}
	}
	if len(group) > 0 {
		groups = append(groups, group)
	}
	return groups, notRun
}

// errorCode returns a tool/result record's error code, or "".
func (r record) errorCode() string {
	v, _ := r.data.Get("error")
	o, ok := v.(*dsl.Object)
	if !ok {
		return ""
	}
	code, _ := o.Get("code")
	s, _ := code.(string)
	return s
}

// presenter draws cards from records with the definitions a session's
// plugins registered. Presentation is pure: the same records and plugins
// draw the same cards, live or replayed.
type presenter struct {
	s *session
}

// cards draws the card of each call of recs.
func (p presenter) cards(recs []record) []card {
	srcs := sources(recs)
	cards := make([]card, 0, len(srcs))
	for _, src := range srcs {
		cards = append(cards, p.card(src))
	}
	return cards
}

func (p presenter) card(src cardSource) card {
	c := card{callID: src.call.str("callId"), name: src.call.str("name")}
	args, hasArgs := src.call.data.Get("arguments")
	var agent *engine.Agent
	if src.call.agent != "" {
		agent = p.s.agents.Agent(src.call.agent)
	}
	def := p.s.scope(agent).Get(c.name)
	if def != nil && def.PresentCall != nil && hasArgs {
		c.call = def.PresentCall(args)
	}
	if src.result == nil {
		return c
	}
	c.hasResult = true
	res := src.result.data
	if v, ok := res.Get("isError"); ok {
		c.isError, _ = v.(bool)
	}
	if v, ok := res.Get("content"); ok {
		blocks, err := engine.ContentFromJSON(v)
		if err != nil {
			blocks = []engine.Block{engine.RawBlock{Value: v}}
		}
		c.content = blocks
	}
	c.code = src.result.errorCode()
	meta, hasMeta := res.Get("meta")
	if def != nil && def.PresentResult != nil && hasArgs {
		c.result = def.PresentResult(args, engine.ResultSummary{
			Content: c.content, IsError: c.isError, Meta: meta, HasMeta: hasMeta,
		})
	}
	return c
}

// contentText is how blocks read as text: a text block (typed, or a raw
// annotated one: engine.BlockText) is its text, any other block
// "[<type> content]", as the pipeline derives a message from blocks.
func contentText(blocks []engine.Block) string {
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if t, ok := engine.BlockText(b); ok {
			parts = append(parts, t)
			continue
		}
		typ := b.BlockType()
		if typ == "" {
			typ = "unknown"
		}
		parts = append(parts, "["+typ+" content]")
	}
	return strings.Join(parts, "\n")
}
