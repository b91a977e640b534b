//go:build linux || darwin || freebsd || netbsd

package quiet

// StatText is statText, the text a kept judgement gives a file's stat.
var StatText = statText

// RealPathByLinks is realPathByLinks, how places are resolved where the
// kernel does not name them (macOS, the BSDs).
var RealPathByLinks = realPathByLinks

// OffByLinks is off with every place resolved so, whatever the system
// the tests run on.
func OffByLinks(rule Rule, doc []byte, env func(string) string) bool {
	return offBy(realPathByLinks, rule, doc, env)
}
