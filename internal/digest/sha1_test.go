package digest

import (
	"crypto/sha1"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every length around the block and padding boundaries, plus a long random
// message, against the standard library.
func TestSHA1MatchesCryptoSHA1(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 300; n++ {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		assert.Equal(t, sha1.Sum(data), SHA1(data), "length %d", n)
	}
	big := make([]byte, 1<<20+7)
	for i := range big {
		big[i] = byte(r.IntN(256))
	}
	assert.Equal(t, sha1.Sum(big), SHA1(big))
}
