package digest

import "math/bits"

// SHA1 returns the SHA-1 digest of data (FIPS 180-4), for naming git
// objects: git's object ids are SHA-1 and the harness writes a few objects
// of its own shadow repository without starting git. Not for anything that
// must resist a forger.
func SHA1(data []byte) [20]byte {
	h := [5]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}
	msg := padded(data)
	var w [80]uint32
	for block := msg; len(block) > 0; block = block[64:] {
		for i := 0; i < 16; i++ {
			w[i] = getUint32(block[4*i:])
		}
		for i := 16; i < 80; i++ {
			w[i] = bits.RotateLeft32(w[i-3]^w[i-8]^w[i-14]^w[i-16], 1)
		}
		a, b, c, d, e := h[0], h[1], h[2], h[3], h[4]
		for i := 0; i < 80; i++ {
			var f, k uint32
			switch {
			case i < 20:
				f, k = b&c|^b&d, 0x5a827999
			case i < 40:
				f, k = b^c^d, 0x6ed9eba1
			case i < 60:
				f, k = b&c|b&d|c&d, 0x8f1bbcdc
			default:
				f, k = b^c^d, 0xca62c1d6
			}
			t := bits.RotateLeft32(a, 5) + f + e + k + w[i]
			a, b, c, d, e = t, a, bits.RotateLeft32(b, 30), c, d
		}
		h[0], h[1], h[2], h[3], h[4] = h[0]+a, h[1]+b, h[2]+c, h[3]+d, h[4]+e
	}
	var sum [20]byte
	for i, v := range h {
		putUint32(sum[4*i:], v)
	}
	return sum
}
