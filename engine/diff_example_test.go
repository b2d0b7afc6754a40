package engine_test

import (
	"context"
	"fmt"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

func ExampleDiff() {
	// Select compiles only the versions compared.
	cat, err := engine.Load(rules.FS, engine.Options{Select: []string{"jax@v2", "jax@v3"}})
	if err != nil {
		panic(err)
	}
	v2, _ := cat.RuleSet("jax@v2")
	v3, _ := cat.RuleSet("jax@v3")
	rep, err := engine.Diff(context.Background(), v2, v3, engine.DiffOptions{Examples: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s -> %s: %d inputs, %d decide differently\n", rep.From, rep.To, rep.Tried, rep.Changed)
	for _, g := range rep.Groups {
		fmt.Printf("%s -> %s: %d inputs, such as\n", g.From, g.To, g.Count)
		x := g.Examples[0]
		fmt.Println(" ", x.InputJSON())
		fmt.Println(" ", x.To.Decision)
	}
	// Output:
	// jax@v2 -> jax@v3: 256 inputs, 8 decide differently
	// gpu-unknown-platform (BufferError) -> gpu-no-hardware-id (BufferError): 4 inputs, such as
	//   {"platform":"gpu","platform_version":"oneapi","memory_kind":"device","local_hardware_id":null,"shards":1}
	//   {"error":{"type":"BufferError","message":"Couldn't get local_hardware_id for __dlpack__"},"rule":"gpu-no-hardware-id","ruleset":"jax@v3"}
	// gpu-unknown-platform (BufferError) -> gpu (kDLOneAPI): 4 inputs, such as
	//   {"platform":"gpu","platform_version":"oneapi","memory_kind":"device","local_hardware_id":0,"shards":1}
	//   {"device_type":"kDLOneAPI","device_type_code":14,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}
}

// The report's Domain is the inputs Diff tried, derived from the rules:
// for each input, the values at which a rule can decide one way or the
// other.
func ExampleDiff_domain() {
	cat, _ := engine.Load(rules.FS, engine.Options{Select: []string{"jax@v3"}})
	v3, _ := cat.RuleSet("jax@v3")
	rep, _ := engine.Diff(context.Background(), v3, v3, engine.DiffOptions{})
	d := rep.Domain
	for _, in := range d.Inputs {
		fmt.Println(in.Name, in.Values)
	}
	fmt.Println(d.Size(), "inputs")
	// Output:
	// platform [cpu gpu tpu <unknown>]
	// platform_version [cuda rocm oneapi <unknown>]
	// memory_kind [device pinned_host <unknown> <nil>]
	// local_hardware_id [<nil> 0]
	// shards [1 0]
	// 256 inputs
}
