package cli

import "fmt"

// diffOp is one line of a rendered diff: kind '-' (removed), '+' (added),
// ' ' (unchanged context) or '@' (a hunk header "@@ -a,n +b,m @@").
type diffOp struct {
	kind byte
	text string
}

// maxDiffCells bounds the line-diff table (old lines × new lines); larger
// changes are shown as every old line removed and every new line added.
const maxDiffCells = 1 << 20

// diffLines returns the unified diff of two texts' lines, in hunks with
// diffContext unchanged lines around each change. Equal texts give no
// lines; a new file (old nil) is every line added, without a header.
func diffLines(old, new []string) []diffOp {
	if old == nil {
		ops := make([]diffOp, len(new))
		for i, l := range new {
			ops[i] = diffOp{'+', l}
		}
		return ops
	}
	return hunks(lineDiff(old, new))
}

// edit is one line of an edit script, with its line numbers (1-based) in
// the old and new texts.
type edit struct {
	kind     byte // '-', '+' or ' '
	text     string
	old, new int
}

// lineDiff is a shortest edit script from old to new by longest common
// subsequence; within a change, removals come before additions.
func lineDiff(old, new []string) []edit {
	n, m := len(old), len(new)
	// Trim the common prefix and suffix: most edits are local.
	pre := 0
	for pre < n && pre < m && old[pre] == new[pre] {
		pre++
	}
	suf := 0
	for suf < n-pre && suf < m-pre && old[n-1-suf] == new[m-1-suf] {
		suf++
	}
	a, b := old[pre:n-suf], new[pre:m-suf]
	var script []edit
	for i := 0; i < pre; i++ {
		script = append(script, edit{' ', old[i], i + 1, i + 1})
	}
	if len(a)*len(b) > maxDiffCells {
		for i, l := range a {
			script = append(script, edit{'-', l, pre + i + 1, 0})
		}
		for j, l := range b {
			script = append(script, edit{'+', l, 0, pre + j + 1})
		}
	} else {
		// lcs[i][j] is the LCS length of a[i:] and b[j:].
		w := len(b) + 1
		lcs := make([]int32, (len(a)+1)*w)
		for i := len(a) - 1; i >= 0; i-- {
			for j := len(b) - 1; j >= 0; j-- {
				if a[i] == b[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(a) || j < len(b) {
			switch {
			case i < len(a) && j < len(b) && a[i] == b[j]:
				script = append(script, edit{' ', a[i], pre + i + 1, pre + j + 1})
				i++
				j++
			case j == len(b) || i < len(a) && lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
				script = append(script, edit{'-', a[i], pre + i + 1, 0})
				i++
			default:
				script = append(script, edit{'+', b[j], 0, pre + j + 1})
				j++
			}
		}
	}
	for k := 0; k < suf; k++ {
		script = append(script, edit{' ', old[n-suf+k], n - suf + k + 1, m - suf + k + 1})
	}
	return script
}

// hunks groups an edit script into unified-diff hunks.
func hunks(script []edit) []diffOp {
	var ops []diffOp
	for i := 0; i < len(script); {
		if script[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-diffContext)
		// Extend the hunk while the next change is within reach of the
		// context.
		end := i
		for end < len(script) {
			if script[end].kind != ' ' {
				end++
				continue
			}
			k := end
			for k < len(script) && script[k].kind == ' ' {
				k++
			}
			if k == len(script) || k-end > 2*diffContext {
				end = min(len(script), end+diffContext)
				break
			}
			end = k
		}
		ops = append(ops, diffOp{'@', header(script[start:end])})
		for _, e := range script[start:end] {
			ops = append(ops, diffOp{e.kind, e.text})
		}
		i = end
	}
	return ops
}

// header writes a hunk's "@@ -a,n +b,m @@" line.
func header(h []edit) string {
	oldStart, newStart, oldN, newN := 0, 0, 0, 0
	for _, e := range h {
		if e.kind != '+' {
			if oldStart == 0 {
				oldStart = e.old
			}
			oldN++
		}
		if e.kind != '-' {
			if newStart == 0 {
				newStart = e.new
			}
			newN++
		}
	}
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@", oldStart, oldN, newStart, newN)
}
