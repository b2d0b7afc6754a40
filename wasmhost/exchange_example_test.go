package wasmhost_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/machine"
	"github.com/dlroute/dlroute/rules"
	"github.com/dlroute/dlroute/wasmhost"
)

// The seed's case decided natively and carried out by the host copier:
// an unknown GPU platform is copied into host memory and exported with
// IS_COPIED.
func ExampleCarryOut() {
	ctx := context.Background()
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	rs, _ := cat.RuleSet("exchange")
	d, err := rs.Resolve(ctx, engine.Input{"platform": "gpu", "platform_version": "<unknown>", "local_hardware_id": 0, "max_version": []any{1, 1}})
	if err != nil {
		log.Fatal(err)
	}
	array := []byte{1, 2, 3, 4}
	res, err := wasmhost.CarryOut(ctx, d, machine.Buffer{DeviceType: machine.DeviceCPU, Data: array, Size: 4}, machine.HostCopier{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Decision.Rule, res.Decision.Flags)
	fmt.Println(res.Buffer.DeviceType, res.Buffer.DeviceID, bytes.Equal(res.Buffer.Data, array), &res.Buffer.Data[0] != &array[0])
	// Output:
	// unknown-platform-host-copy DLPACK_FLAG_BITMASK_IS_COPIED
	// 1 0 true true
}

// The same exchange through the module: it decides, and asks the host to
// make the copy (copy_to_host), which the runner's Host.Copier does. It
// prints
//
//	unknown-platform-host-copy DLPACK_FLAG_BITMASK_IS_COPIED
//	1 0 true
//
// The example has no Output comment, so go test compiles it and does not
// run it: it builds the WebAssembly module, which `go test -short` never
// does. TestExampleRuleSetExchange runs it and checks what it prints.
func ExampleRuleSet_Exchange() {
	ctx := context.Background()
	module, _, err := wasmbuild.Module(ctx, wasmbuild.Options{})
	if err != nil {
		log.Fatal(err)
	}
	r, err := wasmhost.NewRunner(ctx, wasmhost.RunnerConfig{Module: module, Instances: 1, Host: wasmhost.Host{Copier: machine.HostCopier{}}})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close(ctx)
	// The embedded rules pass their tests: the module compiles only the
	// version asked for (exchange, and the jax it imports).
	if err := r.LoadLazy(ctx, rules.FS); err != nil {
		log.Fatal(err)
	}
	rs, err := r.RuleSet(ctx, "exchange")
	if err != nil {
		log.Fatal(err)
	}
	array := []byte{1, 2, 3, 4}
	line := []byte(`{"platform":"gpu","platform_version":"<unknown>","local_hardware_id":0,"max_version":[1,1]}`)
	res, err := rs.Exchange(ctx, line, machine.Buffer{DeviceType: machine.DeviceCPU, Data: array, Size: 4})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Decision.Rule, res.Decision.Flags)
	fmt.Println(res.Buffer.DeviceType, res.Buffer.DeviceID, bytes.Equal(res.Buffer.Data, array))
}

// TestExampleRuleSetExchange runs ExampleRuleSet_Exchange, outside the
// quick loop, and checks what it prints against its doc comment.
func TestExampleRuleSetExchange(t *testing.T) {
	testenv.Short(t, "ExampleRuleSet_Exchange builds the WebAssembly module; it")
	got := testenv.Stdout(t, ExampleRuleSet_Exchange)
	if want := "unknown-platform-host-copy DLPACK_FLAG_BITMASK_IS_COPIED\n1 0 true\n"; got != want {
		t.Errorf("ExampleRuleSet_Exchange printed\n%s\nwant\n%s", got, want)
	}
}
