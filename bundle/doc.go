// Package bundle packs rules directories into signed, checkable archives,
// the unit in which rule updates are shipped to running hosts.
//
// # Format
//
// A bundle is a gzip-compressed tar archive (RFC 1952, POSIX ustar). Its
// first member, ".manifest", is a JSON Manifest: the format
// ("dlroute-bundle/v1"), a revision, a sequence that orders the bundles
// of one signer (absent when 0: unordered), the rule-set versions it holds
// as "name@version", and the path, size and SHA-256 of every file. The other
// members are the files, "<name>/<version>/<file>", exactly those the
// manifest lists, and, when the manifest lists it as "plans" with its path,
// size and SHA-256, "plans.bin" (PlansPath), last: the plan of every
// version, a set of plans (plan.EncodeSet) as rules/plans.bin is, which
// hosts that decide with the decision module load. A signed bundle's
// manifest is a signed note in the format of golang.org/x/mod/sumdb/note:
// the JSON, a blank line, then one "— name signature" line per Ed25519
// signature. Signing the manifest signs every file, and the plans, through
// its digest.
//
// # Use
//
// Build writes a bundle from a rules directory; Read checks one and returns
// its rules as an fs.FS for engine.Load; GenerateKey makes a key pair:
//
//	private, public, err := bundle.GenerateKey("dlroute-rules")
//	m, err := bundle.Build(w, os.DirFS("rules"), bundle.BuildOptions{SignerKeys: []string{private}})
//	b, err := bundle.Read(data, bundle.ReadOptions{Keys: []string{public}})
//	cat, err := engine.Load(b.FS(), engine.Options{})
//
// Read only vouches for the bytes; whether the rules compile and pass their
// tests is the engine's to say, and so is whether plans.bin holds the plans
// the rules build (Bundle.CheckPlans, given what the engine built). Package live does both before it lets a
// bundle decide anything.
//
// # Limits
//
// Read is strict and bounded: MaxArchiveSize, MaxUnpackedSize (the files
// and plans.bin together), MaxFiles, MaxFileSize, MaxPlansSize and
// MaxManifestSize; only files and folders; no path twice;
// no absolute path, "..", backslash or dot-name; nothing after the
// archive. ReadFile reads only a regular file, opened so that it cannot
// block, its size checked before a byte is read. Every refusal is an
// *Error with a stable Code.
//
// # Compatibility
//
// A reader refuses a format it does not know, and a manifest field it does
// not know. The format, the codes and the key format change only with a
// new Format string or a new major version of this module. A field added
// since (Sequence, Plans) is left out of the manifest when it is zero, so
// that a bundle that does not use it reads everywhere; a reader from before
// it refuses a bundle that does. A bundle without plans.bin reads as it
// always did, with Bundle.Plans nil.
package bundle
