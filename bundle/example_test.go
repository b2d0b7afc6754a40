package bundle_test

import (
	"bytes"
	"errors"
	"fmt"

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
	fmt.Println(m.Revision, m.RuleSets)

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
	// 2026-12-01.1 [cupy@v1 exchange@v1 exchange@v2 jax-export@v0.1 jax-export@v0.10 jax-export@v0.2 jax-export@v0.3 jax-export@v0.4 jax-export@v0.5 jax-export@v1 jax-export@v2 jax-import@v0.10 jax-import@v0.2 jax-import@v0.3 jax-import@v0.4 jax-import@v0.5 jax-import@v0.6 jax-import@v0.7 jax-import@v0.8 jax-import@v0.9 jax-import@v1 jax-import@v1.1 jax-import@v2 jax-import@v3 jax@v0 jax@v1 jax@v1.1 jax@v1.2 jax@v2 jax@v3 numpy@v0.1 numpy@v0.2 numpy@v0.3 numpy@v0.4 numpy@v0.5 numpy@v0.6 numpy@v1 numpy@v2 torch@v0.1 torch@v0.2 torch@v0.3 torch@v1 torch@v1.0.1 torch@v1.0.2 torch@v1.0.3 torch@v1.0.4 torch@v1.0.5 torch@v1.0.6 torch@v1.0.7 torch@v1.1 torch@v2 torch@v2.1 torch@v3]
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
