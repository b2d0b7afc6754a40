package capi

import (
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
