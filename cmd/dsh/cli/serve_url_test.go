package cli

import (
	"net"
	"testing"
)

func TestTheServedURLCanBeOpened(t *testing.T) {
	for _, tt := range []struct {
		name, host string
		addr       *net.TCPAddr
		want       string
	}{
		{"0.0.0.0 is reached on 127.0.0.1", "0.0.0.0", &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://127.0.0.1:8080/mcp"},
		{":: is reached on [::1]", "::", &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://[::1]:8080/mcp"},
		{"a loopback address is its own", "127.0.0.1", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://127.0.0.1:8080/mcp"},
		{"a named interface is its own", "192.168.1.5", &net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 9}, "http://192.168.1.5:9/mcp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := endpointURL(tt.host, tt.addr); got != tt.want {
				t.Errorf("endpointURL(%q, %v) = %q, want %q", tt.host, tt.addr, got, tt.want)
			}
		})
	}
}
