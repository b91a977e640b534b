package digest

import (
	"crypto/sha1"
	"crypto/sha256"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every length around the block and padding boundaries, plus a long random
// message, against the standard library, for both digests.
func TestMatchesCrypto(t *testing.T) {
	for _, c := range []struct {
		name       string
		ours, want func([]byte) []byte
	}{
		{"SHA-256", func(b []byte) []byte { s := SHA256(b); return s[:] }, func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }},
		{"SHA-1", func(b []byte) []byte { s := SHA1(b); return s[:] }, func(b []byte) []byte { s := sha1.Sum(b); return s[:] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			for n := 0; n < 300; n++ {
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(r.IntN(256))
				}
				assert.Equal(t, c.want(data), c.ours(data), "length %d", n)
			}
			big := make([]byte, 1<<20+13)
			for i := range big {
				big[i] = byte(r.IntN(256))
			}
			assert.Equal(t, c.want(big), c.ours(big))
		})
	}
}

// The FIPS 180-4 example and the empty message.
func TestSHA256KnownAnswers(t *testing.T) {
	for in, want := range map[string]string{
		"":    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq": "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	} {
		sum := SHA256([]byte(in))
		assert.Equal(t, want, hexOf(sum[:]), "%q", in)
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func FuzzSHA256(f *testing.F) {
	f.Add([]byte("/tmp/project"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if SHA256(data) != sha256.Sum256(data) {
			t.Fatalf("digest of %q differs from crypto/sha256", data)
		}
	})
}
