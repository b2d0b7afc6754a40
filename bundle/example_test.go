package bundle_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

func Example() {
	private, public, err := bundle.GenerateKey("dlroute-rules")
	if err != nil {
		panic(err)
	}
	var archive bytes.Buffer
	m, err := bundle.Build(&archive, rules.FS, bundle.BuildOptions{Revision: "2026-12-01.1", SignerKeys: []string{private}})
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Revision, slices.Contains(m.RuleSets, "jax@v3"), slices.Contains(m.RuleSets, "torch@v3"))

	b, err := bundle.Read(archive.Bytes(), bundle.ReadOptions{Keys: []string{public}})
	if err != nil {
		panic(err)
	}
	cat, err := engine.Load(b.FS(), engine.Options{})
	if err != nil {
		panic(err)
	}
	rs, _ := cat.RuleSet("jax")
	fmt.Println(rs.Ref(), len(b.SignedBy), "signature verified")
	// Output:
	// 2026-12-01.1 true true
	// jax@v3 1 signature verified
}

func ExampleRead_refused() {
	_, public, _ := bundle.GenerateKey("dlroute-rules")
	var archive bytes.Buffer
	bundle.Build(&archive, rules.FS, bundle.BuildOptions{}) // not signed
	_, err := bundle.Read(archive.Bytes(), bundle.ReadOptions{Keys: []string{public}})
	var e *bundle.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code)
		fmt.Println(e)
	}
	// Output:
	// unsigned
	// .manifest: the bundle is not signed, and a key is configured
}
