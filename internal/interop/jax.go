package interop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// gpuClients are the PJRT clients whose arrays JAX's x.platform() calls
// "gpu" (jaxlib's C++ renames cuda, rocm and oneapi), in the order jax's
// gpu_markers table tests them in platform_version.
var gpuClients = []string{"cuda", "rocm", "oneapi"}

// jaxProducer pairs jax version dev (its __dlpack_device__, w its
// release warning) with the jax-export version for release, the release
// the ref named, or where it named none dev's last release, the newest
// checked (its __dlpack__): `jax`, the newest version, is the jax a user
// installs today. A jax version no release shipped has no export to pair
// with.
func jaxProducer(cat *engine.Catalog, dev *engine.RuleSet, w *engine.ReleaseWarning, release string) (*Producer, error) {
	rel := dev.Manifest().Mirrors.Releases
	if rel == nil {
		return nil, &RefusedError{Ref: dev.Ref(), Side: "producer", Reason: "it mirrors no release of JAX, so no version of jax-export (chosen by release) pairs with it for __dlpack__; name a version that a release shipped, such as jax==0.11.0"}
	}
	if release == "" {
		release = rel.Last
	}
	export, ew, err := cat.Lookup("jax-export" + engine.ReleaseRef + release)
	if err != nil {
		return nil, fmt.Errorf("%s (jax %s) as a producer: its __dlpack__ is jax-export's: %w", dev.Ref(), release, err)
	}
	p := &Producer{Ref: dev.Ref(), device: dev, export: export, exportArray: jaxExportArray,
		checks: []VersionCheck{versionCheck(dev, w), versionCheck(export, ew)}}
	p.Arrays = slices.DeleteFunc(arraysFrom(dev, libraryAxes["jax"], func(engine.Input) bool { return true }), func(a Array) bool {
		// x.platform() never says cuda, rocm or oneapi: such a case tests an input JAX does not make.
		return slices.Contains(gpuClients, fmt.Sprint(a.Input["platform"]))
	})
	return p, nil
}

// jaxExportArray is jax-export's input for an array of jax's: the client's
// platform (what the C++ exports by) from x.platform() and its
// platform_version, and the same memory kind and hardware id. A "gpu"
// whose platform_version names no client is taken as a CUDA client: the
// seed's case, a CUDA array of a jaxlib whose version string is
// "<unknown>", which JAX's __dlpack_device__ refuses and its __dlpack__
// exports as kDLCUDA.
func jaxExportArray(in engine.Input) engine.Input {
	platform, _ := in["platform"].(string)
	version, _ := in["platform_version"].(string)
	client := platform
	if platform == "gpu" {
		client = gpuClients[0]
		for _, c := range gpuClients {
			if strings.Contains(version, c) {
				client = c
				break
			}
		}
	}
	out := engine.Input{"client_platform": client}
	for _, k := range []string{"memory_kind", "local_hardware_id"} {
		if v, ok := in[k]; ok {
			out[k] = v
		}
	}
	return out
}

// jaxImport is the rule set of JAX's from_dlpack: a consumer only, which
// a ref to jax as a consumer is paired with by release.
const jaxImport = "jax-import"

// jaxConsumer is the version of jax-import for release, the release the
// ref to jax named, or where it named none dev's last release, the newest
// checked: `jax` as a consumer is the from_dlpack of the jax a user
// installs today. A jax version no release shipped has no import to pair
// with.
func jaxConsumer(cat *engine.Catalog, dev *engine.RuleSet, release string) (*Consumer, error) {
	rel := dev.Manifest().Mirrors.Releases
	if rel == nil {
		return nil, &RefusedError{Ref: dev.Ref(), Side: "consumer", Reason: "it mirrors no release of JAX, so no version of jax-import (chosen by release) pairs with it for from_dlpack; name a version that a release shipped, such as jax==0.12.0"}
	}
	if release == "" {
		release = rel.Last
	}
	rs, w, err := cat.Lookup(jaxImport + engine.ReleaseRef + release)
	if err != nil {
		return nil, fmt.Errorf("%s (jax %s) as a consumer: its from_dlpack is %s's: %w", dev.Ref(), release, jaxImport, err)
	}
	return &Consumer{Ref: rs.Ref(), rs: rs, check: versionCheck(rs, w)}, nil
}
