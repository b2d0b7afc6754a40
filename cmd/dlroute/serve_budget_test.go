package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestServeCheckTimeout: --check-timeout bounds the check of the rules;
// rules it refuses at start, with nothing kept, stop serve with the code.
func TestServeCheckTimeout(t *testing.T) {
	var stderr bytes.Buffer
	status := run([]string{"serve", "--addr", "127.0.0.1:0", "--check-timeout", "1ns"}, nil, &bytes.Buffer{}, &stderr)
	if status != 1 || !strings.Contains(stderr.String(), "check_timeout") {
		t.Fatalf("serve --check-timeout 1ns: status %d\n%s\nwant 1, check_timeout", status, stderr.String())
	}
}
