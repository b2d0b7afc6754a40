package engine_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

func Example() {
	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		panic(err)
	}
	rs, err := cat.RuleSet("jax")
	if err != nil {
		panic(err)
	}
	for _, version := range []string{"PJRT C API\ncuda 12030", "<unknown>"} {
		d, err := rs.Resolve(context.Background(), engine.Input{
			"platform": "gpu", "platform_version": version, "local_hardware_id": 0,
		})
		if err != nil {
			panic(err)
		}
		fmt.Println(d)
	}
	// Output:
	// {"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}
	// {"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: <unknown>"},"rule":"gpu-unknown-platform","ruleset":"jax@v3"}
}

func ExampleLoad_error() {
	fsys := fstest.MapFS{}
	for _, name := range []string{"manifest.yaml", "device_types.yaml", "rules.yaml", "tests.yaml"} {
		data, _ := rules.FS.ReadFile("jax/v3/" + name)
		fsys["jax/v3/"+name] = &fstest.MapFile{Data: data}
	}
	fsys["jax/v3/rules.yaml"] = &fstest.MapFile{Data: []byte(`inputs:
  platform: string
rules:
  - id: cpu
    when: platfrom == 'cpu'
    device: {type: kDLCPU, id: 0}
`)}
	_, err := engine.Load(fsys, engine.Options{})
	for _, e := range engine.Errors(err) {
		fmt.Println(e.Code)
		fmt.Println(e)
	}
	// Output:
	// cel_type
	// rules/jax/v3/rules.yaml:5:11: rule cpu: when: undeclared reference to 'platfrom' (did you mean 'platform'?)
	//  |     when: platfrom == 'cpu'
	//  | ..........^
}

func ExampleRuleSet_DecodeInput() {
	cat, _ := engine.Load(rules.FS, engine.Options{Select: []string{"jax@v3"}})
	rs, _ := cat.RuleSet("jax@v3")
	_, err := rs.DecodeInput([]byte(`{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":"0"}`))
	fmt.Println(err)
	in, _ := rs.DecodeInput([]byte(`{"platform":"gpu","platform_version":"rocm 60200","memory_kind":"pinned_host","local_hardware_id":1}`))
	d, _ := rs.Resolve(context.Background(), in)
	fmt.Println(d.DeviceType, d.DeviceTypeCode, d.DeviceID)
	// Output:
	// input local_hardware_id is a string; want int or null
	// kDLROCMHost 11 1
}

// A release newer than every version's range is answered by the version
// whose range is newest, with a warning that says what was checked;
// RuleSet refuses it.
func ExampleCatalog_Lookup() {
	cat, err := engine.Load(rules.FS, engine.Options{Select: []string{"jax==9.0.0"}})
	if err != nil {
		panic(err)
	}
	rs, w, err := cat.Lookup("jax==9.0.0")
	if err != nil {
		panic(err)
	}
	fmt.Println(rs.Ref(), w.Code, w.Newer, w.Releases.Checked[w.Releases.Last])
	_, err = cat.RuleSet("jax==9.0.0")
	fmt.Println(err.(*engine.Error).Code)
	// A build between releases is read as its release.
	_, w, _ = cat.Lookup("jax==0.11.0.dev20260801")
	fmt.Println(w.Build, w.ReadAs)
	// Output:
	// jax@v3 unchecked_release true run
	// unchecked_release
	// development build 0.11.0
}
