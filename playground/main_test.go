package playground_test

import (
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
