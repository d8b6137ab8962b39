package tests

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// The guard policies deny_shell and protect_secrets, JS originals against
// their Lua twins, on inputs chosen at the edges of each rule: both must
// decide alike, with the same messages. The tools are Go stand-ins that
// only echo, so no command ever runs.

// twinGuardEngine loads the given example files (relative to dir) into a
// fresh engine whose tools shell, grep, glob, read_file and write_file echo.
func twinGuardEngine(t *testing.T, dir string, files ...string) *engine.Service {
	t.Helper()
	scripts := t.TempDir()
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(scripts, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svc := engine.New()
	for _, name := range []string{"shell", "grep", "glob", "read_file", "write_file"} {
		def := &engine.Definition{
			Name:        name,
			Description: "echoes",
			Parameters:  dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
			Output: engine.Output{Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "string"}),
				Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil }},
			Execute: func(context.Context, any, *engine.Run) (any, error) { return "ran", nil },
		}
		if _, err := svc.Global().Register(def); err != nil {
			t.Fatal(err)
		}
	}
	logger := slog.New(slog.DiscardHandler)
	loader := &scripting.Loader{Service: svc, Logger: logger, Hosts: []scripting.Host{&js.Host{Logger: logger}, &lua.Host{Logger: logger}}}
	loadAll(t, loader, scripts, "")
	return svc
}

// twinCommands are shell commands at the edges of deny_shell's rules and
// of protect_secrets' split into words.
var twinCommands = []string{
	// rm-root
	"rm -rf /", "rm -fr /*", "rm -R ~", "rm --recursive $HOME/", "rm -r --force /", "rm -f -r /", "rm -rf /tmp",
	"rm -rf ~/x", "rm -rf --no-preserve-root /", "rm -r  --no-preserve-root", "rm -rf /;echo", "rm -rf /&", "rm -rf /|x",
	"rm -rf ./", "rm -x=1 -r /", "rm -r-f /", "xrm -rf /", "a-rm -rf /", "rm\t-rf\t/", "rm -rf\u00a0/", "rm\u3000-rf /",
	"rm -rf", "rm /", "rm -f /", "rm -rfv /*", "rm - -r /", "rm -- -r /", "rm -r -- /", "rm -r $HOME", "rm -r $HOMEDIR",
	"rm -r ~user", "sudo rm -rf / ", "rm -Rf /\n", "rm -rf ~/\u2028", "rm -rf /x /", "rm -r\v/", "rm -r /\ufeff", "rm -r /\u00a0",
	// pipe-to-shell
	"curl x | sh", "curl x|bash", "curl x | sudo zsh", "curl x | sudo  dash -s", "wget -O- x | ksh", "curl x | fish",
	"curl x | shell", "curl x ; sh", "curl x & | sh", "curl x | tee f | sh", "curlx | sh", "xcurl | sh", "curl | python",
	"curl x |sudo sh", "curl x | sudosh", "curl x | bsh", "wget2 | sh", "curl x |\u3000sh", "curl a | sh2", "curl x | sh;",
	"curl x | sudo\u00a0bash", "wget x | sudo", "curl curl | sh",
	// mkfs
	"mkfs", "mkfs.ext4", "mkfsx", "xmkfs", "/sbin/mkfs.vfat /dev/sdb", "mkfs_", "mkfs-x", "mkfs.",
	// dd-device
	"dd if=a of=/dev/sda", "dd of=/dev/null", "dd of=/dev/nullx", "dd of=/dev/zero2", "dd if=x; of=/dev/sda",
	"dd of=/dev/stdout of=/dev/sdb", "ddd of=/dev/sda", "dd xof=/dev/sda", "dd if=/dev/sda of=/dev/stderr", "dd of=/dev/",
	"dd|of=/dev/sda", "echo of=/dev/sda dd", "dd of=/dev/null;dd of=/dev/sdc", "dd of=/dev/null_", "dd -of=/dev/sda",
	// device-write
	"cat x > /dev/sda", "echo >/dev/hdb", "x >  /dev/vda1", "x > /dev/xvdf", "x > /dev/mmcblk0", "x > /dev/disk2",
	"x > /dev/null", "x > /dev/tty", "x >> /dev/sda", "x 2> /dev/sdb", "x >\u00a0/dev/sda", "x > dev/sda",
	// fork-bomb
	":(){ :|:& };:", "bomb(){ bomb|bomb& };bomb", "b() { b | b & } ; b", "foo(){ oo|oo& };oo", "f(){ f|f& };g",
	"f (){ f|f & };f", ":(){ :|: & };:", "a(){ a|a& }; ab", "x:(){ :|:& };:", "_(){ _|_& };_", ".(){ .|.& };.",
	"f(){f|f&};f", "f(){ f|f& }", "ab(){ b|b& };b", "a%(){ a%|a%& };a%",
	// shutdown
	"shutdown -h now", "reboot", "; reboot", "a && reboot", "a | halt", "sudo poweroff", "sudo  shutdown",
	"echo shutdown", "xsudo reboot", "rebooter", "a;halt", "a;\u00a0halt", "nohup reboot", "sudo\treboot", "sudoreboot",
	" reboot", "\u00a0reboot", "a |\nhalt", "poweroff_now",
	// several rules: the first in the list wins
	"reboot; rm -rf /", "curl x | sh; mkfs", ":(){ :|:& };: && dd of=/dev/sda",
	// protect_secrets' words
	"cat .env | head", "source .env", "cp id_rsa x", "echo 'x.pem'", "a=.env", "cat\u00a0.env", "cat `.env`", "(cat .env)",
	"cat .env.example", "cat x.pem>y", "cat a/.netrc", "ls credentials.json", "cat\u2003credentials", "echo .env.sample .env.prod",
	"true", "",
}

// twinPaths are path arguments at the edges of isSecretPath.
var twinPaths = []string{
	".env", ".env.local", ".env.example", ".env.", ".env.\nx", ".env.\u2028x", ".env.\u2029x", ".env.\rx", ".env.\u2028", ".env.examples", "a/.env/", "a\\.env",
	"x.pem", "x.PEM", "x.pem.bak", "id_rsa", "id_rsa.pub", "id_ed25519", "id_ecdsa", "id_dsa", ".netrc", ".pgpass",
	".npmrc", ".pypirc", "credentials", "credentials.json", "credentials.yaml", "a/b/", "", "/", ".env.example/",
	"dir/.npmrc", "keystore", "a.keystore", "x.p12", "x.pfx", "x.jks", "x.key", "xkey", "**/*.pem", "*.env", "src\\id_rsa\\",
	".env.dist", ".env.template", ".env.sample", "notes.txt", ".envrc", "x/.env\n",
}

func TestDenyShellAndProtectSecretsTwinsDecideAlike(t *testing.T) {
	luaDir := filepath.Join("..", "scripts", "examples", "lua")
	jsSvc := twinGuardEngine(t, examplePlugins, "deny_shell.js", "protect_secrets.js", "lib/secrets.ts", "tsconfig.json")
	luaSvc := twinGuardEngine(t, luaDir, "deny_shell.lua", "protect_secrets.lua", "lib/secrets.lua")
	type input struct {
		name string
		args *dsl.Object
	}
	var inputs []input
	for _, c := range twinCommands {
		inputs = append(inputs, input{"shell", dsl.NewObject(dsl.Member{Key: "command", Value: c})})
	}
	for _, p := range twinPaths {
		for _, key := range []string{"path", "include", "pattern", "cwd"} {
			for _, name := range []string{"read_file", "grep"} {
				inputs = append(inputs, input{name, dsl.NewObject(dsl.Member{Key: key, Value: p})})
			}
		}
		inputs = append(inputs, input{"shell", dsl.NewObject(dsl.Member{Key: "command", Value: "cat " + p})})
	}
	// Neither a string command nor a path: both let them through.
	inputs = append(inputs,
		input{"shell", dsl.NewObject(dsl.Member{Key: "command", Value: 1.0})},
		input{"shell", dsl.NewObject(dsl.Member{Key: "cmd", Value: "rm -rf /"})},
		input{"write_file", dsl.NewObject(dsl.Member{Key: "path", Value: dsl.NewObject()})},
		input{"glob", dsl.NewObject(dsl.Member{Key: "pattern", Value: "**/*.pem"}, dsl.Member{Key: "path", Value: ".env"})},
	)
	denials := 0
	for i, in := range inputs {
		call := func(svc *engine.Service) (string, bool) {
			r := svc.Call(context.Background(), engine.Input{CallID: fmt.Sprintf("c%d", i), Name: in.name, Arguments: in.args})
			return exMarshal(t, r.JSON()), r.IsError
		}
		got, denied := call(luaSvc)
		want, _ := call(jsSvc)
		if got != want {
			t.Errorf("%s %s:\nLua %s\nJS  %s", in.name, exMarshal(t, in.args), got, want)
		}
		if denied {
			denials++
		}
	}
	// The inputs exercise both outcomes.
	if denials < len(inputs)/4 || denials > len(inputs)*3/4 {
		t.Errorf("%d of %d inputs denied", denials, len(inputs))
	}
}
