package tsbuild

import "fmt"

// MaxNesting bounds how deeply a source may nest before it is parsed.
// esbuild's and goja's parsers recurse in Go once per level of nesting; at a
// few hundred thousand levels ([[[…]]], ((…)), a=a=…, !!!…, a?b:a?b:…,
// function f(){function f(){…) either overflows the Go stack, a fatal error
// that would end the process. Real code nests a few dozen levels.
const MaxNesting = 10000

// NestingError is a source refused by CheckNesting.
type NestingError struct {
	Line, Column int // 1-based; the column counts bytes
	Limit        int
}

func (e *NestingError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.message())
}

func (e *NestingError) message() string {
	return fmt.Sprintf("the source nests more than %d levels deep", e.Limit)
}

// runFactor is how many bracket-free nesting operators one expression may
// hold for each level of the limit: runs are counted loosely (a newline
// does not end them, since a statement may go on over lines), so they get
// more room than brackets, still well under what overflows a parser.
const runFactor = 5

// CheckNesting refuses a JavaScript or TypeScript source whose nesting could
// exceed limit levels of brackets (or 5×limit levels counting the operators
// below), before any parser sees it. It is a conservative
// estimate from a single pass over the text, not a parse: strings,
// comments, template literals and regular expression literals are skipped;
// each open bracket is a level, and so is each operator that can nest
// without brackets (=, =>, ?, !, ~, unary + and -, <, and the keywords a
// parser descends into: new, typeof, void, await, yield, function, class)
// until the next comma, semicolon or bracket at its level. So it may refuse
// code a parser would accept when one run holds tens of thousands of such
// operators, and it never accepts what a parser would nest deeper than
// 5×limit. limit <= 0 means MaxNesting.
func CheckNesting(src []byte, limit int) error {
	if limit <= 0 {
		limit = MaxNesting
	}
	s := nestScanner{src: src, limit: limit, line: 1, lineStart: 0}
	return s.scan()
}

type nestScanner struct {
	src       []byte
	limit     int
	line      int
	lineStart int
	// depth is the bracket depth; run counts the bracket-free nesting
	// operators since the last separator at each depth (runs[depth]).
	depth int
	runs  []int
	// templates holds the bracket depths at which a template literal's
	// ${ opened, so its } resumes the template.
	templates []int
	// regexOK reports whether a / here starts a regular expression (the
	// last significant token was an operator or an opening bracket).
	regexOK bool
}

func (s *nestScanner) fail(i int) error {
	return &NestingError{Line: s.line, Column: i - s.lineStart + 1, Limit: s.limit}
}

func (s *nestScanner) newline(i int) {
	s.line++
	s.lineStart = i + 1
}

func (s *nestScanner) level(i int) error {
	if s.depth > s.limit || s.depth+s.runs[s.depth] > runFactor*s.limit {
		return s.fail(i)
	}
	return nil
}

func (s *nestScanner) scan() error {
	src := s.src
	s.runs = []int{0}
	s.regexOK = true
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			s.newline(i)
		case c == ' ' || c == '\t' || c == '\r':
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i += 2
			for i < len(src) && !(src[i] == '*' && i+1 < len(src) && src[i+1] == '/') {
				if src[i] == '\n' {
					s.newline(i)
				}
				i++
			}
			i++
		case c == '\'' || c == '"':
			i = s.skipString(i, c)
			s.regexOK = false
		case c == '`':
			var err error
			if i, err = s.template(i + 1); err != nil {
				return err
			}
		case c == '/' && s.regexOK:
			i = s.skipRegexp(i)
			s.regexOK = false
		case c == '(' || c == '[' || c == '{':
			s.depth++
			if s.depth == len(s.runs) {
				s.runs = append(s.runs, 0)
			}
			s.runs[s.depth] = 0
			if err := s.level(i); err != nil {
				return err
			}
			s.regexOK = true
		case c == ')' || c == ']' || c == '}':
			if c == '}' && len(s.templates) > 0 && s.templates[len(s.templates)-1] == s.depth {
				s.templates = s.templates[:len(s.templates)-1]
				s.depth--
				var err error
				if i, err = s.template(i + 1); err != nil {
					return err
				}
				continue
			}
			if s.depth > 0 {
				s.depth--
			}
			s.regexOK = false
		case c == ',' || c == ';':
			s.runs[s.depth] = 0
			s.regexOK = true
		case c == '=' || c == '?' || c == '!' || c == '~' || c == '+' || c == '-' || c == '<':
			s.runs[s.depth]++
			if err := s.level(i); err != nil {
				return err
			}
			s.regexOK = true
		case isIdentByte(c):
			j := i
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			switch string(src[i:j]) {
			case "new", "typeof", "void", "await", "yield", "function", "class", "return", "delete", "in", "of", "case", "throw":
				s.runs[s.depth]++
				if err := s.level(i); err != nil {
					return err
				}
				s.regexOK = true
			default:
				s.regexOK = false
			}
			i = j - 1
		default:
			s.regexOK = true
		}
	}
	return nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
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
			s.regexOK = false
			return i, nil
		case '$':
			if i+1 < len(s.src) && s.src[i+1] == '{' {
				i++
				s.depth++
				if s.depth == len(s.runs) {
					s.runs = append(s.runs, 0)
				}
				s.runs[s.depth] = 0
				s.templates = append(s.templates, s.depth)
				s.regexOK = true
				return i, s.level(i)
			}
		}
	}
	return i, nil
}
