package tsbuild

import "fmt"

// MaxNesting bounds how deeply a source may nest before it is parsed.
// esbuild's and goja's parsers recurse in Go once per level of nesting; at a
// few hundred thousand levels ([[[…]]], ((…)), a=a=…, !!!…, a?b:a?b:…,
// function f(){function f(){…) either overflows the Go stack, a fatal error
// that would end the process. Real code nests a few dozen levels.
//
// Flat chains recurse too, once per link: esbuild's parser, visitor and
// printer and goja's parser and compiler descend into an else-if chain, a
// chain of calls or member accesses (f()()…, a.b.c…, f“…), a binary
// chain (a+a+…, a&&a&&…) and a comma chain (a,a,…) one link at a time,
// and overflow at 50,000 to 300,000 links. Some constructs cost esbuild
// time more than stack: nested functions and blocks (its renamer), runs of
// negations, folds of string literals. CheckNesting bounds each of them
// too: see [CheckNesting] for the limits, which derive from this one.
const MaxNesting = 10000

// NestingError is a source refused by CheckNesting.
type NestingError struct {
	Line, Column int // 1-based; the column counts bytes
	// Limit is the limit passed: the number of levels, or of links of
	// Construct.
	Limit int
	// Construct names the chain that is too long ("else-if branches"), or
	// is empty for nesting.
	Construct string
	// verb is "chains" or "nests" (for statements without braces).
	verb string
}

func (e *NestingError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.message())
}

func (e *NestingError) message() string {
	if e.Construct == "" {
		return fmt.Sprintf("the source nests more than %d levels deep", e.Limit)
	}
	return fmt.Sprintf("the source %s more than %d %s", e.verb, e.Limit, e.Construct)
}

// runFactor is how many bracket-free nesting operators, and chain links,
// the levels open at one point of a source may hold for each level of the
// limit: runs are counted loosely (a newline does not end them, since a
// statement may go on over lines), so they get more room than brackets,
// still well under what overflows a parser.
const runFactor = 2

// chain is a kind of flat chain that a parser or visitor recurses on once
// per link.
type chain int

const (
	// chainRun counts the bracket-free nesting operators (=, ?, !, unary
	// operators, keywords such as new and typeof): bounded by the total
	// only.
	chainRun chain = iota
	chainBinary
	chainComma
	chainPostfix
	chainElseIf
	chainBraceless
	// chainArrow counts the arrows of an expression (a=>a=>…): with the
	// open blocks, the scopes esbuild nests (see chainScope).
	chainArrow
	// chainNot counts negations (!!…, also across parentheses).
	chainNot
	numChains
	// chainScope is not counted per level: it is the open blocks (function
	// and class bodies, blocks) plus the arrows pending, the depth of
	// esbuild's scope tree, checked against scopeLimit.
	chainScope
	// chainFold is not counted per level: it is the string literal
	// bytes esbuild folds, checked against foldLimit.
	chainFold
	// chainRename is not counted per level: it is the renamer's work,
	// checked against renameCost.
	chainRename
)

// chainLimit is the most links of c one level may hold, for a nesting
// limit of limit. esbuild is quadratic in the length of a comma chain (10,000
// links take 6 s) and of statements nested without braces (if (a) if (a) …:
// 10,000 take 3 s), so those get a tenth.
func chainLimit(c chain, limit int) int {
	switch c {
	case chainComma, chainBraceless, chainNot:
		return max(1, limit/10)
	case chainRun:
		return runFactor * limit
	case chainArrow, chainScope:
		return scopeLimit(limit)
	}
	return limit
}

// scopeLimit is how deep functions, arrows, classes and blocks may nest for
// a nesting limit of limit (250 for 10000). esbuild's renamer walks the
// scope chain for every name of every scope, and again for every name a
// nested scope reuses (a=>a=>…): 1000 nested arrows take 3.5 s of CPU,
// 1000 nested functions 3 s, 10,000 nested blocks more than 30 s; 250
// take a tenth of a second.
func scopeLimit(limit int) int { return max(1, limit/40) }

// foldLimit bounds the string literal bytes esbuild copies while it folds
// a chain of string literals joined by + ('ab' + 'cd' + … becomes one
// string, copied again for each link: 10,000 literals of 8 bytes took 5 s).
// Every + adds the bytes of the string literals of its expression so far
// (those of parenthesised groups included) to one count for the source.
// 32 MiB, for a nesting limit of 10000, takes well under a second, and
// admits, for instance, a concatenation of 800 pieces of 80 bytes.
func foldLimit(limit int) int { return limit * 3200 }

// construct is what the error for a chain too long says.
func (c chain) construct() (verb, what string) {
	switch c {
	case chainBinary:
		return "chains", "binary operators"
	case chainComma:
		return "chains", "comma operators"
	case chainPostfix:
		return "chains", "calls, member accesses or tagged templates"
	case chainElseIf:
		return "chains", "else-if branches"
	case chainBraceless:
		return "nests", "statements without braces"
	case chainArrow, chainScope:
		return "nests", "functions, classes or blocks"
	case chainNot:
		return "chains", "negations"
	case chainFold:
		return "folds", "bytes of string literals"
	case chainRename:
		return "needs", "renaming steps for names its nested scopes share"
	}
	return "", ""
}

// scope is a function body, block or arrow function open at some point of
// the source, and the names that appeared in it.
type scope struct {
	// level is the index in levels of the level it belongs to: a block's
	// own, the level of an arrow's =>.
	level int
	arrow bool
	names map[string]struct{}
}

// renameCost bounds the work of esbuild's renamer, for a nesting limit of
// limit (5,000,000 for 10000). The renamer gives each name a scope
// declares a name no enclosing scope uses: it tries the name, then name2,
// name3, …, walking up the scope chain for each try. A name that every
// enclosing scope declares too costs the square of the depth, each time a
// scope declares it: 100,000 arrows a=>a in an array 20 arrows deep took
// 4.4 s, 240 arrows of 100 parameters each nested in one another 20 s.
// CheckNesting charges each name the first time it appears in a scope
// (declared or not: an upper bound) the number of open scopes it appears in
// times the depth, and refuses a source whose total passes this bound;
// the costliest sources it accepts take about half a second (11,000 arrows
// a=>a 20 arrows deep). Code as written or minified stays far below: of
// 8,800 JavaScript files of a development machine, the densest (minified
// bundles) charge 0.43 a byte, 1,800,000 for a file at the 4 MiB cap, and
// the costliest charges 68,512 (an editor bundle of 370 KB).
func renameCost(limit int) int { return limit * 500 }

// CheckNesting refuses a JavaScript or TypeScript source whose nesting, or
// one of whose flat chains, could make a parser or visitor recurse deep
// enough to overflow the Go stack (or, for esbuild, take quadratic time or
// worse), before any parser sees it. limit <= 0 means MaxNesting. It is a
// conservative estimate from a single pass over the text, not a parse:
// strings, comments, template literals and regular expression literals are
// skipped, and it may refuse code a parser would accept, never accept what
// a parser would nest deeper than the limits below.
//
// What it bounds, for a limit of 10000 (the message names the construct):
//
//   - brackets: 10000 levels of ( [ { and ${ ("the source nests more than
//     10000 levels deep");
//   - else-if chains: 10000 branches at one level ("the source chains more
//     than 10000 else-if branches");
//   - calls, member accesses and tagged templates: 10000 links of one chain
//     (f()(), a.b.c, a[0][0], a?.b, f“, "the source chains more than 10000
//     calls, member accesses or tagged templates");
//   - binary operators: 10000 in one expression between commas and
//     semicolons (a+a+…, a&&a&&…, a??a??…, "the source chains more than
//     10000 binary operators");
//   - comma operators: 1000 in one statement (a,a,a at a statement or in
//     parentheses, and the declarators of var, let and const, on which
//     esbuild is quadratic; the commas of array and object literals,
//     arguments and parameters separate items of a list, which no parser
//     recurses on: "the source chains more than 1000 comma operators");
//   - statements nested without braces: 1000 (if (a) if (a) …, while (a)
//     while (a) …, labels a: b: …, "the source nests more than 1000
//     statements without braces");
//   - functions, classes and blocks: 250 deep, counting the open braces of
//     blocks and of function and class bodies and the arrows of the
//     expressions they hold (a=>a=>…, function f(){function f(){…, "the
//     source nests more than 250 functions, classes or blocks"; see
//     scopeLimit);
//   - names that nested scopes share: an estimate of the work of
//     esbuild's renamer (a=>a=>…, or many arrows a=>a inside 20 arrows
//     a=>) at most 5,000,000 steps ("the source needs more than 5000000
//     renaming steps for names its nested scopes share"; see renameCost);
//   - negations: 1000 pending at one point (!!!…, also !(!(…)), "the
//     source chains more than 1000 negations"; esbuild simplifies each
//     against all the ones inside it);
//   - folds of string literals: 32,000,000 bytes copied over the source
//     ('ab' + 'cd' + …, "the source folds more than 32000000 bytes of
//     string literals"; see foldLimit);
//   - altogether: the levels open at one point plus every chain link and
//     every bracket-free nesting operator they hold (=, =>, ?, !, ~, the
//     unary operators, <, **, and the keywords a parser descends into: new,
//     typeof, void, await, yield, function, class, …) at most 2×10000 ("the
//     source nests more than 10000 levels deep").
//
// A chain ends where the parser's recursion provably returns: an expression
// chain at the next comma (binary operators) or semicolon at its level, a
// statement keyword that cannot appear inside an expression (if, return,
// const, …), or a statement ending (a semicolon, or a closing brace followed
// by the start of another statement) followed by anything but else.
func CheckNesting(src []byte, limit int) error {
	if limit <= 0 {
		limit = MaxNesting
	}
	s := nestScanner{src: src, limit: limit, line: 1, lineStart: 0}
	return s.scan()
}

// levelKind is what a bracket opens.
type levelKind uint8

const (
	// kindBlock is a statement list: the top level, a block, a function
	// or class body.
	kindBlock levelKind = iota
	// kindGroup is a parenthesised expression, a statement head, an index
	// or a template substitution: a comma there is an operator.
	kindGroup
	// kindList is an array literal, arguments or parameters: commas
	// separate items.
	kindList
	// kindObject is an object literal.
	kindObject
)

type level struct {
	kind levelKind
	// head is a statement head (if, for, while, with): a body follows.
	head bool
	n    [numChains]int
	// lits is the string literal bytes of the expression so far.
	lits int
	// cond counts the ? waiting for their :, caseOpen a case waiting for
	// its :.
	cond     int
	caseOpen bool
}

// prevKind classifies the last significant token.
type prevKind uint8

const (
	pStart      prevKind = iota // start of the source, or of a statement
	pOperand                    // ends an operand: a name, a literal, ) ] }
	pOp                         // an operator or keyword awaiting an operand
	pDot                        // . or ?.: a property name follows
	pBody                       // a body follows: ) of a head, else, do, a label's :
	pArrow                      // =>
	pWord                       // an identifier (an operand, and maybe a label)
	pObjColon                   // the : of an object key or of a conditional
	pBlockClose                 // } of a block: an operand, or a statement's end
)

type nestScanner struct {
	src       []byte
	limit     int
	line      int
	lineStart int
	// levels[0] is the top level; depth is len(levels)-1.
	levels []level
	// total is the open levels plus the links and operators they hold.
	total int
	// arrows is the arrows pending at every open level, nots the
	// negations, blocks the open levels of kind kindBlock (the top level
	// aside).
	arrows, nots, blocks int
	// fold is the string literal bytes esbuild folds (see foldLimit).
	fold int
	// scopes are the open scopes, innermost last (see renameCost); names
	// counts, for each name, the open scopes it appears in; rename is the
	// estimate so far.
	scopes []scope
	names  map[string]int
	rename int
	// templates holds the depths at which a template literal's ${ opened,
	// so its } resumes the template.
	templates []int
	prev      prevKind
	// prevWord is the last identifier or keyword ("" after other tokens).
	prevWord string
	// wordAtStart: the identifier just read started a statement (a label
	// if : follows).
	wordAtStart bool
	// end is set at a statement's possible end (after ; or a block's }),
	// at the level whose chains of statements it may end: the next token
	// decides.
	end      bool
	endBrace bool
}

func (s *nestScanner) depth() int { return len(s.levels) - 1 }

func (s *nestScanner) cur() *level { return &s.levels[len(s.levels)-1] }

func (s *nestScanner) failAt(i int, c chain, limit int) error {
	e := &NestingError{Line: s.line, Column: i - s.lineStart + 1, Limit: limit}
	e.verb, e.Construct = c.construct()
	return e
}

func (s *nestScanner) newline(i int) {
	s.line++
	s.lineStart = i + 1
}

// add counts a link of c at the current level.
func (s *nestScanner) add(i int, c chain) error {
	l := s.cur()
	l.n[c]++
	s.total++
	s.count(c, 1)
	switch c {
	case chainRun:
	case chainArrow:
		s.scopes = append(s.scopes, scope{level: s.depth(), arrow: true})
		if lim := scopeLimit(s.limit); s.blocks+s.arrows > lim {
			return s.failAt(i, chainScope, lim)
		}
	case chainNot:
		if lim := chainLimit(c, s.limit); s.nots > lim {
			return s.failAt(i, c, lim)
		}
	default:
		if lim := chainLimit(c, s.limit); l.n[c] > lim {
			return s.failAt(i, c, lim)
		}
	}
	if s.total > runFactor*s.limit {
		return s.failAt(i, chainRun, s.limit)
	}
	return nil
}

// reset ends the chains cs of the current level.
func (s *nestScanner) reset(cs ...chain) {
	l := s.cur()
	for _, c := range cs {
		s.total -= l.n[c]
		s.count(c, -l.n[c])
		l.n[c] = 0
		if c == chainArrow {
			s.popScopes(s.depth(), true)
		}
		if c == chainBinary {
			l.lits = 0
		}
	}
}

// count keeps the scanner-wide counts of the chains that nest across
// levels.
func (s *nestScanner) count(c chain, n int) {
	switch c {
	case chainArrow:
		s.arrows += n
	case chainNot:
		s.nots += n
	}
}

// popScopes closes the scopes of the levels from level on, or, with
// arrows, the arrows of that level only.
func (s *nestScanner) popScopes(level int, arrows bool) {
	for len(s.scopes) > 0 {
		sc := s.scopes[len(s.scopes)-1]
		if sc.level < level || arrows && (sc.level != level || !sc.arrow) {
			return
		}
		for n := range sc.names {
			if s.names[n]--; s.names[n] == 0 {
				delete(s.names, n)
			}
		}
		s.scopes = s.scopes[:len(s.scopes)-1]
	}
}

// name charges the identifier w, at position i, to the renamer's estimate
// (see renameCost).
func (s *nestScanner) name(i int, w string) error {
	if len(s.scopes) == 0 {
		return nil
	}
	sc := &s.scopes[len(s.scopes)-1]
	if _, ok := sc.names[w]; ok {
		return nil
	}
	if sc.names == nil {
		sc.names = make(map[string]struct{})
	}
	if s.names == nil {
		s.names = make(map[string]int)
	}
	sc.names[w] = struct{}{}
	s.names[w]++
	s.rename += s.names[w] * len(s.scopes)
	if lim := renameCost(s.limit); s.rename > lim {
		return s.failAt(i, chainRename, lim)
	}
	return nil
}

// literal counts a string literal of n bytes (quotes included) in the
// current expression.
func (s *nestScanner) literal(n int) { s.cur().lits += n }

// plus charges a binary + with the string literal bytes of its
// expression so far (see foldLimit).
func (s *nestScanner) plus(i int) error {
	s.fold += s.cur().lits
	if lim := foldLimit(s.limit); s.fold > lim {
		return s.failAt(i, chainFold, lim)
	}
	return nil
}

// open enters a level of kind k.
func (s *nestScanner) open(i int, k levelKind, head bool) error {
	s.levels = append(s.levels, level{kind: k, head: head})
	s.total++
	if s.depth() > s.limit || s.total > runFactor*s.limit {
		return s.failAt(i, chainRun, s.limit)
	}
	if k == kindBlock {
		s.scopes = append(s.scopes, scope{level: s.depth()})
		s.blocks++
		if lim := scopeLimit(s.limit); s.blocks+s.arrows > lim {
			return s.failAt(i, chainScope, lim)
		}
	}
	return nil
}

// close leaves the current level and returns it.
func (s *nestScanner) close() level {
	if len(s.levels) == 1 {
		return level{kind: kindGroup}
	}
	l := s.levels[len(s.levels)-1]
	s.levels = s.levels[:len(s.levels)-1]
	s.total--
	for c, n := range l.n {
		s.total -= n
		s.count(chain(c), -n)
	}
	if l.kind == kindBlock {
		s.blocks--
	}
	s.popScopes(len(s.levels), false)
	if l.kind == kindGroup && l.lits > 0 {
		// A group of literals folds into one, which folds into the
		// parent's run of literals.
		p := s.cur()
		if p.lits > 0 {
			s.fold += p.lits + l.lits
		}
		p.lits += l.lits
	}
	return l
}

// continues reports whether a word after a statement's possible end
// continues the statement or the chain (else, the while of a do, an
// operator keyword).
func continues(word string) bool {
	switch word {
	case "else", "while", "in", "instanceof", "of", "as", "satisfies", "catch", "finally", "extends", "implements":
		return true
	}
	return false
}

// token is called for every significant token before it is handled: it
// settles a pending statement end and ends the postfix chain unless the
// token continues it.
func (s *nestScanner) token(word string, startsStatement, postfix bool) {
	if s.end {
		s.end = false
		if (startsStatement || !s.endBrace) && !continues(word) {
			s.reset(chainElseIf, chainBraceless)
			if s.endBrace && s.cur().kind == kindBlock {
				// A statement after a block (function f() {} g()):
				// the expression chains of the last one ended too.
				s.reset(chainRun, chainBinary, chainComma, chainArrow, chainNot)
			}
		}
	}
	if !postfix {
		s.reset(chainPostfix)
	}
}

// stmtKeywords are the reserved words that start a statement and cannot
// appear inside an expression: one ends the expression chains of its level.
var stmtKeywords = map[string]bool{
	"if": true, "for": true, "while": true, "do": true, "return": true, "var": true, "const": true,
	"throw": true, "try": true, "switch": true, "break": true, "continue": true, "debugger": true,
	"with": true, "else": true, "case": true, "default": true, "catch": true, "finally": true,
}

// runKeywords are the keywords a parser descends into without brackets.
var runKeywords = map[string]bool{
	"new": true, "typeof": true, "void": true, "await": true, "yield": true, "function": true,
	"class": true, "return": true, "delete": true, "in": true, "of": true, "case": true, "throw": true,
}

// operandWords are the keywords that are operands.
var operandWords = map[string]bool{"this": true, "super": true, "null": true, "true": true, "false": true}

func (s *nestScanner) scan() error {
	src := s.src
	s.levels = []level{{kind: kindBlock}}
	s.prev = pStart
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			s.newline(i)
			continue
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i += 2
			for i < len(src) && !(src[i] == '*' && i+1 < len(src) && src[i+1] == '/') {
				if src[i] == '\n' {
					s.newline(i)
				}
				i++
			}
			i++
			continue
		}
		var err error
		switch {
		case c == '\'' || c == '"':
			s.token("", true, false)
			start := i
			i = s.skipString(i, c)
			s.literal(i - start + 1)
			s.setPrev(pOperand, "")
		case c == '`':
			tagged := s.operandEnded()
			s.token("", !tagged, tagged)
			if tagged {
				if err = s.add(i, chainPostfix); err != nil {
					return err
				}
			}
			start := i
			i, err = s.template(i + 1)
			s.literal(i - start + 1)
		case c == '/' && !s.operandEnded():
			s.token("", true, false)
			i = s.skipRegexp(i)
			s.setPrev(pOperand, "")
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			s.token("", true, false)
			i = s.skipNumber(i)
			s.setPrev(pOperand, "")
		case isIdentByte(c) || c == '#' && i+1 < len(src) && isIdentByte(src[i+1]):
			j := i + 1
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			err = s.word(i, string(src[i:j]))
			i = j - 1
		default:
			i, err = s.punct(i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// operandEnded reports whether the last token ends an operand (so ( [ and
// ` continue a chain of calls and member accesses, and / divides).
func (s *nestScanner) operandEnded() bool {
	switch s.prev {
	case pOperand, pWord, pBlockClose:
		return true
	}
	return false
}

func (s *nestScanner) setPrev(p prevKind, word string) {
	s.prev, s.prevWord = p, word
}

// stmtStart reports whether a token here starts a statement.
func (s *nestScanner) stmtStart() bool {
	switch s.prev {
	case pStart, pBody:
		return true
	case pBlockClose:
		return s.cur().kind == kindBlock
	}
	return false
}

func (s *nestScanner) word(i int, w string) error {
	if s.prev == pDot {
		// A property name, whatever the word.
		s.token(w, false, true)
		s.setPrev(pOperand, "")
		return nil
	}
	atStart := s.stmtStart()
	s.token(w, true, false)
	l := s.cur()
	body := s.prev == pBody
	prevWord := s.prevWord
	var err error
	switch {
	case body && w == "if" && prevWord == "else":
		err = s.add(i, chainElseIf)
	case body && (w == "if" || w == "for" || w == "while" || w == "with" || w == "do"):
		err = s.add(i, chainBraceless)
	}
	if err != nil {
		return err
	}
	if stmtKeywords[w] && prevWord != "as" {
		s.reset(chainRun, chainBinary, chainComma, chainArrow, chainNot)
	}
	if (w == "in" || w == "instanceof") && s.operandEnded() {
		if err := s.add(i, chainBinary); err != nil {
			return err
		}
	}
	if runKeywords[w] {
		if err := s.add(i, chainRun); err != nil {
			return err
		}
	}
	switch {
	case w == "case" || w == "default":
		l.caseOpen = true
		s.setPrev(pOp, w)
	case w == "else" || w == "do" || w == "try" || w == "finally":
		s.setPrev(pBody, w)
	case operandWords[w]:
		l.lits = 0 // not a literal: a run of literals to fold ends
		s.setPrev(pOperand, w)
	case runKeywords[w] || stmtKeywords[w] || w == "instanceof":
		s.setPrev(pOp, w)
	default:
		l.lits = 0
		s.setPrev(pWord, w)
		s.wordAtStart = atStart
		return s.name(i, w)
	}
	s.wordAtStart = false
	return nil
}

// punct handles the punctuator at i and returns the index of its last byte.
func (s *nestScanner) punct(i int) (int, error) {
	src := s.src
	c := src[i]
	switch c {
	case '(', '[', '{':
		return i, s.openBracket(i, c)
	case ')', ']', '}':
		return s.closeBracket(i, c)
	}
	op := punctAt(src, i)
	postfix := op == "." || op == "?."
	s.token("", false, postfix)
	l := s.cur()
	operand := s.operandEnded()
	for k := 0; k < len(op) && op != "?." && op != "??" && op != "??="; k++ {
		switch op[k] {
		case '=', '?', '!', '~', '+', '-', '<':
			if err := s.add(i, chainRun); err != nil {
				return 0, err
			}
		}
	}
	if op == "**" || op == "**=" {
		// Right-associative: a**a**… nests.
		if err := s.add(i, chainRun); err != nil {
			return 0, err
		}
	}
	var err error
	switch op {
	case ".", "?.":
		err = s.add(i, chainPostfix)
		s.setPrev(pDot, "")
		return i + len(op) - 1, err
	case ",":
		s.reset(chainRun, chainBinary, chainArrow, chainNot)
		if l.kind == kindBlock || l.kind == kindGroup {
			err = s.add(i, chainComma)
		}
	case ";":
		s.reset(chainRun, chainBinary, chainComma, chainArrow, chainNot)
		l.cond, l.caseOpen = 0, false
		s.end, s.endBrace = true, false
		s.setPrev(pStart, "")
		return i, nil
	case "?":
		l.cond++
	case ":":
		switch {
		case l.cond > 0:
			l.cond--
			s.setPrev(pObjColon, "")
		case l.caseOpen:
			l.caseOpen = false
			s.setPrev(pStart, "")
		case l.kind == kindBlock && s.prev == pWord && s.wordAtStart:
			// A label: a statement follows.
			err = s.add(i, chainBraceless)
			s.setPrev(pBody, "")
		default:
			s.setPrev(pObjColon, "")
		}
		return i, err
	case "=>":
		err = s.add(i, chainArrow)
		s.setPrev(pArrow, "")
		return i + 1, err
	case "!":
		err = s.add(i, chainNot)
	case "++", "--":
		if operand {
			s.setPrev(pOperand, "")
			return i + 1, nil
		}
	default:
		if operand && isBinary(op) {
			err = s.add(i, chainBinary)
			if err == nil && op == "+" {
				err = s.plus(i)
			}
		}
	}
	s.setPrev(pOp, "")
	return i + len(op) - 1, err
}

// isBinary reports whether op, after an operand, is a left-associative
// binary operator (assignments and ** are right-associative: counted as
// nesting operators).
func isBinary(op string) bool {
	switch op {
	case "+", "-", "*", "/", "%", "&", "|", "^", "&&", "||", "??",
		"==", "!=", "===", "!==", "<", ">", "<=", ">=", "<<", ">>", ">>>":
		return true
	}
	return false
}

// punctators, longest first for each first byte.
var punctators = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=",
	"%=", "&=", "|=", "^=", "**", "<<", ">>",
}

// punctAt returns the punctuator at i (a single byte when no longer one
// matches; ?. before a digit is ? then a number).
func punctAt(src []byte, i int) string {
	for _, p := range punctators {
		if i+len(p) <= len(src) && string(src[i:i+len(p)]) == p {
			if p == "?." && i+2 < len(src) && src[i+2] >= '0' && src[i+2] <= '9' {
				continue
			}
			return p
		}
	}
	return string(src[i : i+1])
}

func (s *nestScanner) openBracket(i int, c byte) error {
	operand := s.operandEnded()
	prev, prevWord := s.prev, s.prevWord
	postfix := operand && c != '{'
	s.token("", false, postfix)
	if postfix {
		if err := s.add(i, chainPostfix); err != nil {
			return err
		}
	}
	l := s.cur()
	var k levelKind
	head := false
	switch c {
	case '(':
		switch {
		case prev == pOp && (prevWord == "if" || prevWord == "for" || prevWord == "while" || prevWord == "with"):
			k, head = kindGroup, true
		case prev == pOp && (prevWord == "switch" || prevWord == "catch"):
			k = kindGroup
		case operand || prevWord == "function":
			k = kindList
		default:
			k = kindGroup
		}
	case '[':
		k = kindList
		if operand {
			k = kindGroup
		}
	case '{':
		k = kindObject
		switch prev {
		case pStart, pBody, pArrow, pBlockClose, pOperand, pWord:
			k = kindBlock
		case pOp:
			if prevWord == "class" {
				k = kindBlock
			}
		}
		if prev == pWord && (prevWord == "import" || prevWord == "export" || prevWord == "let") {
			k = kindObject // import {a, b}, export {a, b}, let {a, b} = …
		}
		if prev == pBlockClose && l.kind != kindBlock {
			k = kindObject
		}
		if prev == pStart && l.kind == kindObject {
			k = kindObject
		}
	}
	if err := s.open(i, k, head); err != nil {
		return err
	}
	s.setPrev(pStart, "")
	if k != kindBlock {
		s.setPrev(pOp, "")
	}
	return nil
}

func (s *nestScanner) closeBracket(i int, c byte) (int, error) {
	if c == '}' && len(s.templates) > 0 && s.templates[len(s.templates)-1] == s.depth() {
		s.templates = s.templates[:len(s.templates)-1]
		s.token("", false, false)
		s.close()
		j, err := s.template(i + 1)
		s.literal(j - i + 1)
		return j, err
	}
	s.token("", false, true)
	l := s.close()
	if lim := foldLimit(s.limit); s.fold > lim {
		return i, s.failAt(i, chainFold, lim)
	}
	switch {
	case c == ')' && l.head:
		s.setPrev(pBody, "")
	case c == '}' && l.kind == kindBlock:
		s.setPrev(pBlockClose, "")
		s.end, s.endBrace = true, true
	default:
		s.setPrev(pOperand, "")
	}
	return i, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// skipNumber returns the index of the last byte of the number at i.
func (s *nestScanner) skipNumber(i int) int {
	src := s.src
	for i < len(src) && (isIdentByte(src[i]) || src[i] == '.') {
		if (src[i] == 'e' || src[i] == 'E') && i+1 < len(src) && (src[i+1] == '-' || src[i+1] == '+') &&
			!(i > 0 && (src[i-1] == 'x' || src[i-1] == 'X')) {
			i++
		}
		i++
	}
	return i - 1
}

// skipString returns the index of the closing quote of the string at i.
func (s *nestScanner) skipString(i int, q byte) int {
	for i++; i < len(s.src); i++ {
		switch s.src[i] {
		case '\\':
			i++
			if i < len(s.src) && s.src[i] == '\n' {
				s.newline(i)
			}
		case q:
			return i
		case '\n':
			s.newline(i)
			return i // an unterminated string: the parser reports it
		}
	}
	return i
}

// skipRegexp returns the index of the closing slash of the regular
// expression literal at i (its flags are scanned as an identifier).
func (s *nestScanner) skipRegexp(i int) int {
	class := false
	for i++; i < len(s.src); i++ {
		switch s.src[i] {
		case '\\':
			i++
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				return i
			}
		case '\n':
			s.newline(i)
			return i
		}
	}
	return i
}

// template scans a template literal's text from i; at ${ it opens a level
// and returns, to resume at the matching }. It returns the index of the
// closing backquote or of the ${'s brace.
func (s *nestScanner) template(i int) (int, error) {
	for ; i < len(s.src); i++ {
		switch s.src[i] {
		case '\\':
			i++
		case '\n':
			s.newline(i)
		case '`':
			s.setPrev(pOperand, "")
			return i, nil
		case '$':
			if i+1 < len(s.src) && s.src[i+1] == '{' {
				i++
				if err := s.open(i, kindGroup, false); err != nil {
					return i, err
				}
				s.templates = append(s.templates, s.depth())
				s.setPrev(pOp, "")
				return i, nil
			}
		}
	}
	return i, nil
}
