// Package digest computes SHA-256 (and SHA-1, for git's object ids)
// without crypto/sha256.
//
// Every hook is a process that Claude Code starts before every tool call or
// at every turn end, and crypto/sha256 links Go's whole FIPS 140 module,
// whose package initialisation costs about a third of a millisecond per
// process start (measured on the 2-core VM of docs/perf.md): more than the
// work a hook does when the call is unrelated. The harness hashes a few short
// strings (the state root for the session lock's name, odd session ids for file
// names), so the plain algorithm of FIPS 180-4 serves; the tests check it
// against crypto/sha256.
package digest

import "math/bits"

var k = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// padded is data as SHA-1 and SHA-256 hash it: the message, a 1 bit,
// zeros, and its length in bits, a whole number of 64-byte blocks.
func padded(data []byte) []byte {
	n := len(data)
	msg := make([]byte, (n+9+63)/64*64)
	copy(msg, data)
	msg[n] = 0x80
	putUint64(msg[len(msg)-8:], uint64(n)*8)
	return msg
}

// SHA256 returns the SHA-256 digest of data.
func SHA256(data []byte) [32]byte {
	h := [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}
	msg := padded(data)
	var w [64]uint32
	for block := msg; len(block) > 0; block = block[64:] {
		for i := 0; i < 16; i++ {
			w[i] = getUint32(block[4*i:])
		}
		for i := 16; i < 64; i++ {
			s0 := bits.RotateLeft32(w[i-15], -7) ^ bits.RotateLeft32(w[i-15], -18) ^ w[i-15]>>3
			s1 := bits.RotateLeft32(w[i-2], -17) ^ bits.RotateLeft32(w[i-2], -19) ^ w[i-2]>>10
			w[i] = w[i-16] + s0 + w[i-7] + s1
		}
		a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
		for i := 0; i < 64; i++ {
			s1 := bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)
			ch := e&f ^ ^e&g
			t1 := hh + s1 + ch + k[i] + w[i]
			s0 := bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)
			maj := a&b ^ a&c ^ b&c
			t2 := s0 + maj
			hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
		}
		h[0], h[1], h[2], h[3] = h[0]+a, h[1]+b, h[2]+c, h[3]+d
		h[4], h[5], h[6], h[7] = h[4]+e, h[5]+f, h[6]+g, h[7]+hh
	}
	var sum [32]byte
	for i, v := range h {
		putUint32(sum[4*i:], v)
	}
	return sum
}

// Big-endian words, written out: encoding/binary links reflect and
// unicode, whose initialisation would run before internal/quiet's.

func getUint32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[3]) | uint32(b[2])<<8 | uint32(b[1])<<16 | uint32(b[0])<<24
}

func putUint32(b []byte, v uint32) {
	_ = b[3]
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

func putUint64(b []byte, v uint64) {
	putUint32(b, uint32(v>>32))
	putUint32(b[4:], uint32(v))
}
