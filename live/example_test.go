package live_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/live"
)

func Example() {
	dir, _ := os.MkdirTemp("", "rules")
	defer os.RemoveAll(dir)
	ruletest.WriteDir(dir, ruletest.Rules())

	ctx := context.Background()
	r, err := live.Open(ctx, live.Config{Source: live.Dir(dir)})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	// go r.Watch(ctx) would now pick up every edit of dir.

	s := r.Acquire()
	defer s.Release()
	rs, _ := s.Catalog().RuleSet("jax")
	d, _ := rs.Resolve(ctx, engine.Input{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0})
	fmt.Println(d.DeviceType, d.RuleSet, s.Revision() == r.Status().Active.Revision)
	// Output:
	// kDLCUDA jax@v3 true
}

func ExampleRules_Offer() {
	ctx := context.Background()
	r, _ := live.Open(ctx, live.Config{Source: live.Static("rules", ruletest.Rules())})
	defer r.Close()
	before := r.Current().Revision()

	// A rules edit whose new test fails is refused; the rules in force stay.
	err := r.Offer(ctx, &live.Candidate{Origin: "edited", Dir: ruletest.WithCase(ruletest.Rules(), "nvfork")})
	ref := err.(*live.Refusal)
	fmt.Println(ref.Stage, ref.Code, r.Current().Revision() == before)
	// Output:
	// test test_failure true
}

func ExampleHTTP() {
	src, err := live.HTTP("https://rules.example/dlroute/rules.tar.gz", live.HTTPOptions{})
	if err != nil {
		panic(err)
	}
	public, _ := os.ReadFile("/etc/dlroute/rules.pub")
	cfg := live.Config{
		Source: src,
		Gate:   live.Gate{Keys: []string{string(public)}},
		Keep:   filepath.Join(os.TempDir(), "dlroute-last-good.tar.gz"),
	}
	_ = cfg // live.Open(ctx, cfg), then go r.Watch(ctx)
}

func ExampleGate_Admit() {
	// The gate serve applies, without activating anything: what
	// `dlroute bundle verify` runs on a bundle.
	s, err := live.Gate{}.Admit(context.Background(), &live.Candidate{Origin: "rules", Dir: ruletest.Rules()})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Manifest().RuleSets, s.Revision() == s.Manifest().Revision)

	_, err = live.Gate{}.Admit(context.Background(), &live.Candidate{Origin: "rules", Dir: ruletest.WithTypo(ruletest.Rules())})
	ref := err.(*live.Refusal)
	fmt.Println(ref.Stage, ref.Code)
	// Output:
	// [exchange@v1 exchange@v2 jax@v0 jax@v1 jax@v1.1 jax@v1.2 jax@v2 jax@v3] true
	// compile cel_type
}
