package hostapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

func TestTextsFromScriptsAreCut(t *testing.T) {
	long := strings.Repeat("é", 10<<10) // 20 KiB
	want := strings.Repeat("é", 8<<10) + "… (truncated)"
	t.Run("an error text over 16 KiB is cut between characters, marked", func(t *testing.T) {
		if got := hostapi.ErrorText(long); got != want {
			t.Errorf("got %d bytes", len(got))
		}
	})
	t.Run("a logged line over 16 KiB is cut between characters, marked", func(t *testing.T) {
		var buf bytes.Buffer
		hostapi.Log(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)), "info", long, nil)
		var rec struct{ Msg string }
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Msg != want {
			t.Errorf("got %d bytes", len(rec.Msg))
		}
	})
}
