package readme_test

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
)

// documentedPorts are the ports the blocks serve on, as a person reads
// them: the playground's default and serve's.
var documentedPorts = regexp.MustCompile(`\b(8080|8181)\b`)

// startsAServer is a line that starts dlroute's playground or serve.
var startsAServer = regexp.MustCompile(`dlroute (playground|serve)\b`)

// withOwnPorts rewrites each documented port a block names to a free
// port of the block's own, the same number everywhere in it, so that two
// runs of the test command on one machine do not meet on one port (one
// run's curl answered by the other's serve). A line that starts the
// playground or serve without naming its address (--addr; --static
// serves nothing) is returned in left: it would take the default port
// whoever holds it.
func withOwnPorts(block string) (out string, left []string, err error) {
	for _, line := range strings.Split(block, "\n") {
		if startsAServer.MatchString(line) && !strings.Contains(line, "--addr ") && !strings.Contains(line, "--static ") {
			left = append(left, line)
		}
	}
	free := map[string]string{}
	for _, port := range documentedPorts.FindAllString(block, -1) {
		if free[port] != "" {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, fmt.Errorf("finding a free port for %s: %w", port, err)
		}
		free[port] = fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	return documentedPorts.ReplaceAllStringFunc(block, func(p string) string { return free[p] }), left, nil
}

// TestOwnPorts: a block's documented ports become free ones, each the same
// wherever the block names it; other numbers stay; a server started on
// its default port is named.
func TestOwnPorts(t *testing.T) {
	block := "dlroute serve --addr 127.0.0.1:8181 &\ncurl localhost:8181/v1/status\npython3 -m http.server -d site 8080\necho 18080 81810\ndlroute playground\n"
	out, left, err := withOwnPorts(block)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	serve := strings.TrimSuffix(strings.TrimPrefix(lines[0], "dlroute serve --addr 127.0.0.1:"), " &")
	status := strings.TrimSuffix(strings.TrimPrefix(lines[1], "curl localhost:"), "/v1/status")
	static := strings.TrimPrefix(lines[2], "python3 -m http.server -d site ")
	if serve == "8181" || serve != status || static == "8080" || static == serve || serve == "" || static == "" {
		t.Errorf("rewritten:\n%s\nwant 8181 one free port throughout, 8080 another", out)
	}
	if lines[3] != "echo 18080 81810" {
		t.Errorf("numbers that only contain a port changed: %q", lines[3])
	}
	if len(left) != 1 || left[0] != "dlroute playground" {
		t.Errorf("servers on their default port: %q, want the playground's line", left)
	}
}
