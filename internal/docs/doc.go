// Package docs holds the tests that keep README.md and docs/*.md true: every
// relative link resolves to a file and, where it names one, a heading.
package docs
