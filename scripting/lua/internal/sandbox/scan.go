package sandbox

// nestingLine scans Lua source text, before it is parsed, for nesting
// deeper than limit and returns the line where it first goes deeper, or 0.
//
// gopher-lua's parser is an LALR automaton (goyacc) whose stack holds one
// entry of some 260 bytes per pending symbol and doubles as it grows: 1 MiB
// of "((((" or "a..a..a.." or "do do do" takes it to 300 to 600 MB before
// the syntax tree can be measured. The pending symbols are what this scan
// counts, lexing just enough of Lua to do so (comments, strings, long
// brackets, names, numbers): at each level of brackets and blocks, one
// level plus the right-associative operators (.. and ^) and the unary
// operators (not, -, #) still waiting for their right operand. A comma, a
// semicolon, =, a comparison, and, or and every statement keyword end the
// run of pending operators at their level. The count is close to the depth
// of the syntax tree (which [tooDeep] checks after parsing), so a chunk this
// scan accepts has a parser stack bounded by a small multiple of limit.
func nestingLine(src string, limit int) int {
	type level struct{ pending, unary int }
	stack := []level{{}}
	depth := 1 // levels, plus the pending operators of every level
	line := 1
	operand := false // the previous token ends an operand (so - is binary)
	cur := func() *level { return &stack[len(stack)-1] }
	push := func() bool {
		stack = append(stack, level{})
		depth++
		return depth > limit
	}
	pop := func() {
		if len(stack) > 1 {
			top := stack[len(stack)-1]
			depth -= 1 + top.pending + top.unary
			stack = stack[:len(stack)-1]
		}
	}
	// endRun ends the run of pending operators of the current level.
	endRun := func() {
		l := cur()
		depth -= l.pending + l.unary
		l.pending, l.unary = 0, 0
	}
	// endUnary ends the unary operators waiting for the operand just read.
	endUnary := func() {
		l := cur()
		depth -= l.unary
		l.unary = 0
	}
	pendingOp := func(unary bool) bool {
		l := cur()
		if unary {
			l.unary++
		} else {
			l.pending++
		}
		depth++
		return depth > limit
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			i += 2
			if n, ok := longBracket(src, i); ok {
				i, line = skipLong(src, i, n, line)
			} else {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
			continue
		case c == '[':
			if n, ok := longBracket(src, i); ok {
				i, line = skipLong(src, i, n, line)
				endUnary()
				operand = true
				continue
			}
			i++
			operand = false
			if push() {
				return line
			}
			continue
		case c == '"' || c == '\'':
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) {
					if src[i+1] == '\n' {
						line++
					}
					i++
				}
				i++
			}
			i++
			endUnary()
			operand = true
			continue
		case isNameStart(c):
			j := i
			for j < len(src) && (isNameStart(src[j]) || isDigit(src[j])) {
				j++
			}
			word := src[i:j]
			i = j
			switch word {
			case "function", "do", "then", "repeat":
				endRun()
				operand = false
				if push() {
					return line
				}
			case "end", "until":
				pop()
				if word == "until" {
					endRun()
				}
				operand = word == "end" // function ... end is an operand
			case "elseif":
				pop()
				endRun()
				operand = false
			case "not":
				operand = false
				if pendingOp(true) {
					return line
				}
			case "and", "or", "else", "local", "return", "break", "if", "while", "for", "in", "goto":
				endRun()
				operand = false
			default: // a name, nil, true or false
				endUnary()
				operand = true
			}
			continue
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			for i < len(src) && (isNameStart(src[i]) || isDigit(src[i]) || src[i] == '.') {
				if (src[i] == 'e' || src[i] == 'E') && i+1 < len(src) && (src[i+1] == '-' || src[i+1] == '+') {
					i++
				}
				i++
			}
			endUnary()
			operand = true
			continue
		}
		// Punctuation.
		switch {
		case c == '(' || c == '{':
			i++
			operand = false
			if push() {
				return line
			}
		case c == ')' || c == ']' || c == '}':
			i++
			pop()
			endUnary()
			operand = true
		case c == '.' && i+2 < len(src) && src[i+1] == '.' && src[i+2] == '.':
			i += 3
			endUnary()
			operand = true
		case c == '.' && i+1 < len(src) && src[i+1] == '.', c == '^':
			if c == '.' {
				i += 2
			} else {
				i++
			}
			operand = false
			if pendingOp(false) {
				return line
			}
		case c == '-' || c == '#':
			i++
			unary := c == '#' || !operand
			operand = false
			if unary && pendingOp(true) {
				return line
			}
		case c == ',' || c == ';' || c == '<' || c == '>' || c == '~' ||
			(c == '=' && !(i+1 < len(src) && src[i+1] == '=')):
			i++
			endRun()
			operand = false
		case c == '=': // ==
			i += 2
			endRun()
			operand = false
		default: // + * / % . : and anything else
			i++
			operand = false
		}
	}
	return 0
}

func isNameStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// longBracket reports whether a long bracket [[ or [=*[ opens at i, and its
// level (the number of =).
func longBracket(src string, i int) (int, bool) {
	if i >= len(src) || src[i] != '[' {
		return 0, false
	}
	j := i + 1
	for j < len(src) && src[j] == '=' {
		j++
	}
	if j < len(src) && src[j] == '[' {
		return j - i - 1, true
	}
	return 0, false
}

// skipLong skips the long string or comment opening at i with level n and
// returns the position after it and the line there.
func skipLong(src string, i, n, line int) (int, int) {
	i += n + 2
	for i < len(src) {
		switch src[i] {
		case '\n':
			line++
		case ']':
			j := i + 1
			for j < len(src) && src[j] == '=' {
				j++
			}
			if j-i-1 == n && j < len(src) && src[j] == ']' {
				return j + 1, line
			}
		}
		i++
	}
	return i, line
}
