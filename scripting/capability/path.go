package capability

import (
	"context"
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/scripting"
)

// pathModule is dsh/path: Node's path.posix functions, on bytes (the
// separators and dots are ASCII, so UTF-8 gives Node's results).
type pathModule struct {
	ws *workspace
}

func (m *pathModule) module() scripting.Module {
	return scripting.Module{Name: "path", Sync: true, Funcs: map[string]scripting.ModuleFunc{
		"join": func(_ context.Context, args []any) (any, error) {
			parts := make([]string, len(args))
			for i := range args {
				s, err := stringArg("join", fmt.Sprintf("parts[%d]", i), args, i)
				if err != nil {
					return nil, err
				}
				parts[i] = s
			}
			return Join(parts...), nil
		},
		"dirname": m.unary("dirname", Dirname),
		"ext":     m.unary("ext", Ext),
		"isAbsolute": func(_ context.Context, args []any) (any, error) {
			if err := arity("isAbsolute", args, 1); err != nil {
				return nil, err
			}
			p, err := stringArg("isAbsolute", "path", args, 0)
			if err != nil {
				return nil, err
			}
			return IsAbsolute(p), nil
		},
		"basename": func(_ context.Context, args []any) (any, error) {
			if err := arity("basename", args, 2); err != nil {
				return nil, err
			}
			p, err := stringArg("basename", "path", args, 0)
			if err != nil {
				return nil, err
			}
			suffix := ""
			if arg(args, 1) != nil {
				if suffix, err = stringArg("basename", "ext", args, 1); err != nil {
					return nil, err
				}
			}
			return Basename(p, suffix), nil
		},
		"relative": func(_ context.Context, args []any) (any, error) {
			if err := arity("relative", args, 2); err != nil {
				return nil, err
			}
			from, err := stringArg("relative", "from", args, 0)
			if err != nil {
				return nil, err
			}
			to, err := stringArg("relative", "to", args, 1)
			if err != nil {
				return nil, err
			}
			return Relative(m.ws.real, from, to), nil
		},
	}}
}

// unary binds a function of one path.
func (m *pathModule) unary(op string, f func(string) string) scripting.ModuleFunc {
	return func(_ context.Context, args []any) (any, error) {
		if err := arity(op, args, 1); err != nil {
			return nil, err
		}
		p, err := stringArg(op, "path", args, 0)
		if err != nil {
			return nil, err
		}
		return f(p), nil
	}
}

// normalizeString resolves "." and ".." in p, Node's normalizeString.
func normalizeString(p string, allowAboveRoot bool) string {
	var res strings.Builder
	resLen := func() int { return res.Len() }
	lastSegmentLength := 0
	lastSlash := -1
	dots := 0
	var code byte
	for i := 0; i <= len(p); i++ {
		if i < len(p) {
			code = p[i]
		} else if code == '/' {
			break
		} else {
			code = '/'
		}
		if code == '/' {
			switch {
			case lastSlash == i-1 || dots == 1:
			case dots == 2:
				s := res.String()
				if len(s) < 2 || lastSegmentLength != 2 || s[len(s)-1] != '.' || s[len(s)-2] != '.' {
					if len(s) > 2 {
						idx := strings.LastIndexByte(s, '/')
						res.Reset()
						if idx == -1 {
							lastSegmentLength = 0
						} else {
							res.WriteString(s[:idx])
							lastSegmentLength = idx - 1 - strings.LastIndexByte(s[:idx], '/')
						}
						lastSlash = i
						dots = 0
						continue
					} else if len(s) != 0 {
						res.Reset()
						lastSegmentLength = 0
						lastSlash = i
						dots = 0
						continue
					}
				}
				if allowAboveRoot {
					if resLen() > 0 {
						res.WriteString("/..")
					} else {
						res.WriteString("..")
					}
					lastSegmentLength = 2
				}
			default:
				if resLen() > 0 {
					res.WriteByte('/')
				}
				res.WriteString(p[lastSlash+1 : i])
				lastSegmentLength = i - lastSlash - 1
			}
			lastSlash = i
			dots = 0
		} else if code == '.' && dots != -1 {
			dots++
		} else {
			dots = -1
		}
	}
	return res.String()
}

// Normalize is Node's path.posix.normalize.
func Normalize(p string) string {
	if p == "" {
		return "."
	}
	abs := p[0] == '/'
	trailing := p[len(p)-1] == '/'
	p = normalizeString(p, !abs)
	if p == "" {
		if abs {
			return "/"
		}
		if trailing {
			return "./"
		}
		return "."
	}
	if trailing {
		p += "/"
	}
	if abs {
		return "/" + p
	}
	return p
}

// Join is Node's path.posix.join.
func Join(parts ...string) string {
	joined := ""
	for _, s := range parts {
		if s == "" {
			continue
		}
		if joined == "" {
			joined = s
		} else {
			joined += "/" + s
		}
	}
	if joined == "" {
		return "."
	}
	return Normalize(joined)
}

// IsAbsolute is Node's path.posix.isAbsolute.
func IsAbsolute(p string) bool { return p != "" && p[0] == '/' }

// Resolve is Node's path.posix.resolve with cwd as the current directory.
func Resolve(cwd string, parts ...string) string {
	resolved := ""
	abs := false
	for i := len(parts) - 1; i >= -1 && !abs; i-- {
		s := cwd
		if i >= 0 {
			s = parts[i]
		}
		if s == "" {
			continue
		}
		resolved = s + "/" + resolved
		abs = s[0] == '/'
	}
	resolved = normalizeString(resolved, !abs)
	if abs {
		return "/" + resolved
	}
	if resolved == "" {
		return "."
	}
	return resolved
}

// Relative is Node's path.posix.relative, relative paths being resolved
// against cwd.
func Relative(cwd, from, to string) string {
	if from == to {
		return ""
	}
	from = Resolve(cwd, from)
	to = Resolve(cwd, to)
	if from == to {
		return ""
	}
	const fromStart, toStart = 1, 1
	fromEnd := len(from)
	fromLen := fromEnd - fromStart
	toLen := len(to) - toStart
	length := min(fromLen, toLen)
	lastCommonSep := -1
	i := 0
	for ; i < length; i++ {
		c := from[fromStart+i]
		if c != to[toStart+i] {
			break
		} else if c == '/' {
			lastCommonSep = i
		}
	}
	if i == length {
		if toLen > length {
			if to[toStart+i] == '/' {
				return to[toStart+i+1:]
			}
			if i == 0 {
				return to[toStart+i:]
			}
		} else if fromLen > length {
			if from[fromStart+i] == '/' {
				lastCommonSep = i
			} else if i == 0 {
				lastCommonSep = 0
			}
		}
	}
	out := ""
	for i = fromStart + lastCommonSep + 1; i <= fromEnd; i++ {
		if i == fromEnd || from[i] == '/' {
			if out == "" {
				out = ".."
			} else {
				out += "/.."
			}
		}
	}
	return out + to[toStart+lastCommonSep:]
}

// Dirname is Node's path.posix.dirname.
func Dirname(p string) string {
	if p == "" {
		return "."
	}
	hasRoot := p[0] == '/'
	end := -1
	matchedSlash := true
	for i := len(p) - 1; i >= 1; i-- {
		if p[i] == '/' {
			if !matchedSlash {
				end = i
				break
			}
		} else {
			matchedSlash = false
		}
	}
	if end == -1 {
		if hasRoot {
			return "/"
		}
		return "."
	}
	if hasRoot && end == 1 {
		return "//"
	}
	return p[:end]
}

// Basename is Node's path.posix.basename; suffix "" means none.
func Basename(p, suffix string) string {
	start := 0
	end := -1
	matchedSlash := true
	if suffix != "" && len(suffix) <= len(p) {
		if suffix == p {
			return ""
		}
		extIdx := len(suffix) - 1
		firstNonSlashEnd := -1
		for i := len(p) - 1; i >= 0; i-- {
			c := p[i]
			if c == '/' {
				if !matchedSlash {
					start = i + 1
					break
				}
			} else {
				if firstNonSlashEnd == -1 {
					matchedSlash = false
					firstNonSlashEnd = i + 1
				}
				if extIdx >= 0 {
					if c == suffix[extIdx] {
						extIdx--
						if extIdx == -1 {
							end = i
						}
					} else {
						extIdx = -1
						end = firstNonSlashEnd
					}
				}
			}
		}
		if start == end {
			end = firstNonSlashEnd
		} else if end == -1 {
			end = len(p)
		}
		return p[start:end]
	}
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			if !matchedSlash {
				start = i + 1
				break
			}
		} else if end == -1 {
			matchedSlash = false
			end = i + 1
		}
	}
	if end == -1 {
		return ""
	}
	return p[start:end]
}

// Ext is Node's path.posix.extname.
func Ext(p string) string {
	startDot := -1
	startPart := 0
	end := -1
	matchedSlash := true
	preDotState := 0
	for i := len(p) - 1; i >= 0; i-- {
		c := p[i]
		if c == '/' {
			if !matchedSlash {
				startPart = i + 1
				break
			}
			continue
		}
		if end == -1 {
			matchedSlash = false
			end = i + 1
		}
		if c == '.' {
			if startDot == -1 {
				startDot = i
			} else if preDotState != 1 {
				preDotState = 1
			}
		} else if startDot != -1 {
			preDotState = -1
		}
	}
	if startDot == -1 || end == -1 || preDotState == 0 ||
		(preDotState == 1 && startDot == end-1 && startDot == startPart+1) {
		return ""
	}
	return p[startDot:end]
}
