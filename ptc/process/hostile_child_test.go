package process

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// grown holds what the "grow" scenario allocates, so it stays live.
var grown [][]byte

// The test binary doubles as a child: run with the arguments
// "hostile-child SCENARIO" it speaks the protocol as SCENARIO says, most
// scenarios badly, so that the parent's defences meet a real process. It is
// not a language runtime: the real children (dsh ptc-child with goja and
// gopher-lua) are tested in package tests.
func runHostileChild(scenario string) int {
	in := bufio.NewReader(os.Stdin)
	out := os.Stdout
	send := func(m *message) {
		body, err := m.encode()
		if err != nil {
			panic(err)
		}
		if err := writeFrame(out, body); err != nil {
			os.Exit(9)
		}
	}
	raw := func(body string) { _ = writeFrame(out, []byte(body)) }
	recv := func() *message {
		body, err := readFrame(in, maxFrameLimit)
		if err != nil {
			os.Exit(0)
		}
		m, err := decode(body, false)
		if err != nil {
			panic(err)
		}
		return m
	}
	_ = recv() // the config
	switch scenario {
	case "call-before-ready":
		send(&message{T: msgCall, ID: 1, Name: "echo", Args: map[string]any{}})
		time.Sleep(time.Hour)
	case "never-ready":
		time.Sleep(time.Hour)
	case "exit-before-ready":
		return 7
	}
	send(&message{T: msgReady})
	for runs := 0; ; runs++ {
		run := recv()
		if run.T != msgRun {
			panic("not a run: " + run.T)
		}
		switch scenario {
		case "echo":
			// Calls echo with the program text as its argument, returns
			// what it gave back.
			send(&message{T: msgLog, Entry: "calling"})
			send(&message{T: msgCall, ID: 1, NS: 0, Name: "echo", Args: run.Program})
			res := recv()
			if !res.OK {
				send(&message{T: msgDone, Kind: "exception", Message: "ToolCallError: " + res.Error})
				continue
			}
			send(&message{T: msgDone, Value: res.Value, HasValue: true})
		case "return-two":
			send(&message{T: msgDone, Value: 2.0, HasValue: true})
		case "garbage":
			raw("{not json")
		case "not-an-object":
			raw(`[1,2]`)
		case "unknown-type":
			raw(`{"t":"result","id":1,"ok":true,"value":1}`)
		case "extra-member":
			raw(`{"t":"log","entry":"x","extra":1}`)
		case "negative-zero":
			raw(`{"t":"done","value":-0}`)
		case "bad-kind":
			raw(`{"t":"done","kind":"nope","message":"x"}`)
		case "huge-frame":
			var h [4]byte
			binary.BigEndian.PutUint32(h[:], 1<<31)
			_, _ = out.Write(h[:])
			time.Sleep(time.Hour)
		case "cut-frame":
			var h [4]byte
			binary.BigEndian.PutUint32(h[:], 100)
			_, _ = out.Write(append(h[:], "{\"t\""...))
			return 0
		case "duplicate-id":
			send(&message{T: msgCall, ID: 1, Name: "echo", Args: "a"})
			send(&message{T: msgCall, ID: 1, Name: "echo", Args: "b"})
			time.Sleep(time.Hour)
		case "unknown-binding":
			send(&message{T: msgCall, ID: 1, Name: "secret", Args: "a"})
			time.Sleep(time.Hour)
		case "bad-namespace":
			send(&message{T: msgCall, ID: 1, NS: 5, Name: "echo", Args: "a"})
			time.Sleep(time.Hour)
		case "forged-logs":
			for i := 0; i < 100; i++ {
				send(&message{T: msgLog, Entry: strings.Repeat("L", 30)})
			}
			send(&message{T: msgDone, Value: "fine", HasValue: true})
		case "cut-output-limit":
			// An output limit reported with its message cut, as a child
			// that charged the message against the cap would.
			send(&message{T: msgLog, Entry: "abc"})
			send(&message{T: msgDone, Kind: "output-limit", Message: "ou"})
		case "log-then-exit":
			send(&message{T: msgLog, Entry: "last words"})
			return 3
		case "exit-3":
			return 3
		case "sigterm":
			_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
			time.Sleep(time.Hour)
		case "out-of-memory":
			fmt.Fprintln(os.Stderr, "fatal error: runtime: out of memory")
			return 2
		case "out-of-memory-long-report":
			// As Go reports a failed allocation under a deep interpreter
			// stack: the reason first, then more frames than a tail keeps.
			fmt.Fprintln(os.Stderr, "runtime: out of memory: cannot allocate 68719476736-byte block (12091392 in use)\nfatal error: out of memory")
			for i := range 1000 {
				fmt.Fprintf(os.Stderr, "github.com/dop251/goja.(*vm).run(...)\n\t/goja/vm.go:%d +0x705 fp=0x3b5e241dcb40\n", i)
			}
			return 2
		case "grow":
			// Touches memory until something stops it.
			for {
				b := make([]byte, 8<<20)
				for i := range b {
					b[i] = 1
				}
				grown = append(grown, b)
				time.Sleep(time.Millisecond)
			}
		case "hang":
			time.Sleep(time.Hour)
		case "spin":
			for {
				_ = runs
			}
		case "late-log":
			send(&message{T: msgDone, Value: float64(runs), HasValue: true})
			send(&message{T: msgLog, Entry: "after the end"})
		case "report":
			// Reports what it inherited: its environment and its open
			// file descriptors (reading the directory opens one more).
			send(&message{T: msgLog, Entry: strings.Join(os.Environ(), "\n")})
			ents, _ := os.ReadDir("/proc/self/fd")
			var fds []string
			for _, e := range ents {
				fds = append(fds, e.Name())
			}
			send(&message{T: msgLog, Entry: strings.Join(fds, " ")})
			wd, _ := os.Getwd()
			send(&message{T: msgDone, Value: wd, HasValue: true})
		case "misuse":
			send(&message{T: msgMisuse, Error: strings.Repeat("m", 5000)})
		default:
			panic("no scenario " + scenario)
		}
	}
}
