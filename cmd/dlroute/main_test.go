package main

import (
	"testing"

	"github.com/dlroute/dlroute/internal/testenv"
)

func TestMain(m *testing.M) {
	// A decision of the module may take as long as the binary may run: a
	// 4 MiB line under -race on a busy machine took past the 10 s default,
	// and answered canceled for too_long (TestCorpus/wazero).
	callTimeout = testenv.Timeout()
	testenv.Main(m)
}
