package process

import "testing"

func TestGoMemoryLimit(t *testing.T) {
	for _, limit := range []int64{64 << 20, 128 << 20, 1 << 30} {
		got := goMemoryLimit(limit)
		if got > limit || got < limit/2 {
			t.Errorf("goMemoryLimit(%d) = %d, want within [limit/2, limit]", limit, got)
		}
		if haveProcStats && got > limit-goLimitSlack {
			t.Errorf("goMemoryLimit(%d) = %d, want the cap less at least the slack (%d) where the resident set can be measured", limit, got, goLimitSlack)
		}
	}
}
