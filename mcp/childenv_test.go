package mcp

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestChildEnvironment(t *testing.T) {
	for k, v := range map[string]string{
		"PATH":                "/usr/bin",
		"LANG":                "de_DE.UTF-8",
		"LC_ALL":              "C.UTF-8",
		"TZ":                  "Europe/Berlin",
		"TMPDIR":              "/var/tmp/x",
		"XDG_CACHE_HOME":      "/home/u/.cache",
		"NODE_EXTRA_CA_CERTS": "/etc/corp-ca.pem",
		"SSL_CERT_FILE":       "/etc/ssl/cert.pem",
		"SSL_CERT_DIR":        "/etc/ssl/certs",
		"REQUESTS_CA_BUNDLE":  "/etc/corp-ca.pem",
		"HTTPS_PROXY":         "http://proxy:3128",
		"https_proxy":         "http://proxy:3128",
		"NO_PROXY":            "localhost",
		"no_proxy":            "localhost",
		"NODE_OPTIONS":        "--require /tmp/evil.js",
		"AWS_SECRET_KEY":      "s3cr3t",
		"HTTP_PROXY":          "http://proxy:3128",
	} {
		t.Setenv(k, v)
	}
	env := childEnv(map[string]string{"HTTP_PROXY": "", "API_KEY": "k"})
	has := func(kv string) bool { return slices.Contains(env, kv) }
	named := func(k string) bool {
		return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	}

	t.Run("a Node or Python server gets the locale, time zone, directories, CAs and proxies", func(t *testing.T) {
		for _, kv := range []string{
			"PATH=/usr/bin", "LANG=de_DE.UTF-8", "LC_ALL=C.UTF-8", "TZ=Europe/Berlin", "TMPDIR=/var/tmp/x",
			"XDG_CACHE_HOME=/home/u/.cache", "NODE_EXTRA_CA_CERTS=/etc/corp-ca.pem",
			"SSL_CERT_FILE=/etc/ssl/cert.pem", "SSL_CERT_DIR=/etc/ssl/certs",
			"REQUESTS_CA_BUNDLE=/etc/corp-ca.pem", "HTTPS_PROXY=http://proxy:3128",
			"https_proxy=http://proxy:3128", "NO_PROXY=localhost", "no_proxy=localhost",
		} {
			if !has(kv) {
				t.Errorf("the child's environment lacks %s: %q", kv, env)
			}
		}
	})
	t.Run("NODE_OPTIONS and other variables stay with dsh", func(t *testing.T) {
		for _, k := range []string{"NODE_OPTIONS", "AWS_SECRET_KEY"} {
			if named(k) {
				t.Errorf("the child's environment has %s: %q", k, env)
			}
		}
	})
	t.Run("the server's own env adds to the set and overrides it", func(t *testing.T) {
		if !has("API_KEY=k") || !has("HTTP_PROXY=") || has("HTTP_PROXY=http://proxy:3128") {
			t.Errorf("env = %q", env)
		}
	})
	t.Run("an unset variable is not passed empty", func(t *testing.T) {
		t.Setenv("LC_CTYPE", "") // restored after the test
		if err := os.Unsetenv("LC_CTYPE"); err != nil {
			t.Fatal(err)
		}
		for _, kv := range childEnv(nil) {
			if strings.HasPrefix(kv, "LC_CTYPE=") {
				t.Errorf("the child's environment has %s", kv)
			}
		}
	})
}
