package main

import (
	"testing"

	"github.com/dlroute/dlroute/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.Main(m)
}
