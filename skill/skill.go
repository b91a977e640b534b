// Package skill embeds the /harness skill (the harness directory beside this
// file), so that `harness install` installs the skill of its own version
// from wherever the executables came: a release archive, an npm package, a
// build.
package skill

import "embed"

// FS holds the skill's files under "harness/".
//
//go:embed harness
var FS embed.FS
