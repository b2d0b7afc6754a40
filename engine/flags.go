package engine

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// Flags is the flags bitmask of a DLManagedTensorVersioned (dlpack.h 1.0
// and later). An unversioned capsule (DLManagedTensor) has no flags.
type Flags uint64

// The flags dlpack.h 1.1 defines. Rules name them as CEL constants of the
// same names, in a list: flags: "[DLPACK_FLAG_BITMASK_IS_COPIED]".
const (
	FlagReadOnly            Flags = 1 << 0 // DLPACK_FLAG_BITMASK_READ_ONLY
	FlagIsCopied            Flags = 1 << 1 // DLPACK_FLAG_BITMASK_IS_COPIED
	FlagIsSubbyteTypePadded Flags = 1 << 2 // DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
)

var flagNames = []string{
	"DLPACK_FLAG_BITMASK_READ_ONLY",
	"DLPACK_FLAG_BITMASK_IS_COPIED",
	"DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED",
}

// The capsule kinds of an export: the PyCapsule names of DLManagedTensor
// and DLManagedTensorVersioned.
const (
	CapsuleUnversioned = "dltensor"
	CapsuleVersioned   = "dltensor_versioned"
)

// Names returns the dlpack.h names of the flags set, lowest bit first.
func (f Flags) Names() []string {
	var out []string
	for f != 0 {
		bit := bits.TrailingZeros64(uint64(f))
		out = append(out, flagName(bit))
		f &^= 1 << bit
	}
	return out
}

func flagName(bit int) string {
	if bit < len(flagNames) {
		return flagNames[bit]
	}
	return fmt.Sprintf("bit %d", bit)
}

// String is the names joined with '|', or "0".
func (f Flags) String() string {
	if f == 0 {
		return "0"
	}
	return strings.Join(f.Names(), "|")
}

// MarshalJSON writes the flags as a list of names.
func (f Flags) MarshalJSON() ([]byte, error) { return json.Marshal(f.Names()) }

// UnmarshalJSON reads a list of names.
func (f *Flags) UnmarshalJSON(data []byte) error {
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return err
	}
	flags, err := parseFlags(names)
	*f = flags
	return err
}

// parseFlags reads flag names, such as "DLPACK_FLAG_BITMASK_IS_COPIED".
func parseFlags(names []string) (Flags, error) {
	var f Flags
	for _, n := range names {
		bit := -1
		for i, known := range flagNames {
			if n == known {
				bit = i
			}
		}
		if bit < 0 {
			return 0, fmt.Errorf("unknown flag %q; want one of %s", n, strings.Join(flagNames, ", "))
		}
		f |= 1 << bit
	}
	return f, nil
}

// flagConstants declares the flags to CEL.
func flagConstants() []cel.EnvOption {
	var opts []cel.EnvOption
	for i, n := range flagNames {
		opts = append(opts, cel.Constant(n, cel.IntType, types.Int(1<<i)))
	}
	return opts
}
