package bundle

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Keys are Ed25519 keys in the text form of golang.org/x/mod/sumdb/note,
// the signed-note format of the Go checksum database: a public key reads
// "name+hash+key" and a private key "PRIVATE+KEY+name+hash+key", where
// hash is the first four bytes of a SHA-256 of the name and key, in hex.
// A signed manifest is a note: its text, a blank line, and a line
// "— name base64(hash+signature)" per signature.

// GenerateKey returns a new Ed25519 key pair named name, such as
// "dlroute-rules": the private key, for BuildOptions.SignerKeys and
// `dlroute bundle build --sign`, and the public key, for ReadOptions.Keys
// and `--key`. A name is not empty and holds no space or '+'.
func GenerateKey(name string) (private, public string, err error) {
	private, public, err = note.GenerateKey(rand.Reader, name)
	if err == nil {
		_, err = note.NewVerifier(public) // GenerateKey does not check the name
	}
	if err != nil {
		return "", "", &Error{Code: CodeBadKey, Message: fmt.Sprintf("key name %q: a name is not empty and has no space or '+'", name), err: err}
	}
	return private, public, nil
}

// CheckPublicKey reports whether key is a public key in the signed-note
// format, and returns its "name+hash".
func CheckPublicKey(key string) (string, error) {
	v, err := note.NewVerifier(strings.TrimSpace(key))
	if err != nil {
		return "", &Error{Code: CodeBadKey, Message: "not a public key in the signed-note format (name+hash+key)", err: err}
	}
	return fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash()), nil
}

func parseKeys(keys []string) (note.Verifiers, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var list []note.Verifier
	for _, k := range keys {
		v, err := note.NewVerifier(strings.TrimSpace(k))
		if err != nil {
			return nil, &Error{Code: CodeBadKey, Message: "not a public key in the signed-note format (name+hash+key)", err: err}
		}
		list = append(list, v)
	}
	return note.VerifierList(list...), nil
}

// openManifest returns the manifest's text and the keys that verifiably
// signed it. With no verifiers, signatures are read past, not checked.
func openManifest(data []byte, verifiers note.Verifiers) ([]byte, []string, error) {
	signed := bytes.Contains(data, []byte("\n\n"))
	if verifiers == nil {
		if !signed {
			return data, nil, nil
		}
		_, err := note.Open(data, note.VerifierList())
		var unverified *note.UnverifiedNoteError
		if !errors.As(err, &unverified) {
			return nil, nil, &Error{Code: CodeManifest, Path: ManifestPath, Message: "the manifest's signature block is malformed", err: err}
		}
		return []byte(unverified.Note.Text), nil, nil
	}
	if !signed {
		return nil, nil, errorf(CodeUnsigned, ManifestPath, "the bundle is not signed, and a key is configured")
	}
	n, err := note.Open(data, verifiers)
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		var by []string
		for _, s := range unverified.Note.UnverifiedSigs {
			by = append(by, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
		}
		return nil, nil, &Error{Code: CodeUnknownSigner, Path: ManifestPath, Message: fmt.Sprintf("the bundle is signed by %s, by none of the configured keys", strings.Join(by, ", ")), err: err}
	case errors.As(err, &invalid):
		return nil, nil, &Error{Code: CodeBadSignature, Path: ManifestPath, Message: fmt.Sprintf("the signature by %s+%08x does not verify: the manifest is not the one that was signed", invalid.Name, invalid.Hash), err: err}
	case err != nil:
		return nil, nil, &Error{Code: CodeBadSignature, Path: ManifestPath, Message: "the manifest's signature block is malformed: " + err.Error(), err: err}
	}
	var by []string
	for _, s := range n.Sigs {
		by = append(by, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
	}
	return []byte(n.Text), by, nil
}
