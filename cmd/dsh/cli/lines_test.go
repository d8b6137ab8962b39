package cli

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatReader yields n bytes of c, then io.EOF, without holding them.
type repeatReader struct {
	c byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = r.c
	}
	r.n -= k
	return k, nil
}

func TestBoundedLinesSkipsLongLinesAndReadsOn(t *testing.T) {
	type item struct {
		line string
		long int // the length of a skipped line, 0 for a line read
	}
	for _, tc := range []struct {
		name, in string
		want     []item
	}{
		{"lines within the bound are read", "ab\ncd\n", []item{{"ab", 0}, {"cd", 0}}},
		{"a line of exactly the bound is read", "abcd\n", []item{{"abcd", 0}}},
		{"a line over the bound is skipped and the next one read", "abcde\nok\n", []item{{"", 5}, {"ok", 0}}},
		{"a last line without a newline is read", "ab\ncd", []item{{"ab", 0}, {"cd", 0}}},
		{"a last line over the bound without a newline is skipped", "ab\ncdefgh", []item{{"ab", 0}, {"", 6}}},
		{"an empty line is a line", "\nab\n", []item{{"", 0}, {"ab", 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newBoundedLines(strings.NewReader(tc.in), 4)
			var got []item
			for {
				line, err := in.next()
				if err == io.EOF {
					break
				}
				var long *longLineError
				switch {
				case errors.As(err, &long):
					if long.Line != in.n || long.Max != 4 {
						t.Errorf("line %d: %+v", in.n, long)
					}
					got = append(got, item{"", long.Bytes})
				case err != nil:
					t.Fatal(err)
				default:
					got = append(got, item{string(line), 0})
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for k := range got {
				if got[k] != tc.want[k] {
					t.Errorf("line %d: got %+v, want %+v", k+1, got[k], tc.want[k])
				}
			}
		})
	}
	t.Run("a line of 256 MiB over a 1 MiB bound is read through without being held", func(t *testing.T) {
		r := io.MultiReader(&repeatReader{c: 'x', n: 256 << 20}, strings.NewReader("\nnext\n"))
		in := newBoundedLines(r, 1<<20)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := in.next()
		runtime.ReadMemStats(&after)
		var long *longLineError
		if !errors.As(err, &long) || long.Bytes != 256<<20 {
			t.Fatalf("got %v", err)
		}
		if err.Error() != "the line has 268435456 bytes, over the 1048576 a line may have: skipped" {
			t.Errorf("message %q", err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
			t.Errorf("reading it allocated %d bytes", n)
		}
		if line, err := in.next(); err != nil || string(line) != "next" {
			t.Errorf("the next line: %q, %v", line, err)
		}
	})
}
