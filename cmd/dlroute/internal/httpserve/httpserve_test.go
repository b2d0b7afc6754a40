package httpserve

import (
	"net"
	"testing"
)

// `playground --addr 0.0.0.0:8080` listens on [::]:8080, which no browser
// opens: it prints loopback's URL, and says it listens on all interfaces.
func TestOpenableURL(t *testing.T) {
	for _, tc := range []struct {
		addr       net.Addr
		want       string
		everywhere bool
	}{
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://127.0.0.1:8080/", true},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "http://127.0.0.1:8080/", true},
		{&net.TCPAddr{Port: 8080}, "http://127.0.0.1:8080/", true},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://127.0.0.1:8080/", false},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 8080}, "http://[::1]:8080/", false},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 7), Port: 80}, "http://192.168.1.7:80/", false},
	} {
		if got, everywhere := OpenableURL(tc.addr); got != tc.want || everywhere != tc.everywhere {
			t.Errorf("OpenableURL(%v) got %s, %v; want %s, %v", tc.addr, got, everywhere, tc.want, tc.everywhere)
		}
	}
}

// The real listener: 0.0.0.0 is opened at loopback.
func TestOpenableURLListening(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	url, everywhere := OpenableURL(ln.Addr())
	if !everywhere || url != "http://127.0.0.1:"+portOf(ln.Addr())+"/" {
		t.Errorf("listening at %s: openableURL got %s, %v", ln.Addr(), url, everywhere)
	}
}

func portOf(addr net.Addr) string {
	_, port, _ := net.SplitHostPort(addr.String())
	return port
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8181": true, "[::1]:8181": true, "localhost:0": true,
		"0.0.0.0:8181": false, ":8181": false, "10.0.0.5:8181": false, "example.com:80": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
