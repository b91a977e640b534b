# Sourced by scripts/build.sh and install.sh: the one list of harness
# executables. Every directory hooks/NAME holding a main.go is one:
# hooks/harness builds `harness`, every other `harness-NAME`. Adding an
# executable is adding its directory (and its entry in internal/programs
# and, for a hook, in settings.Hooks and hooks/hooks.json; the drift tests in
# internal/programs and internal/settings say which is missing).
# Sets $programs to the names, space-separated, in directory order.
# shellcheck shell=bash
programs=""
# Bash alone, no external programs (install.sh runs it with a bare PATH to
# report what is missing).
_scripts=${BASH_SOURCE[0]%/*}
[ "$_scripts" != "${BASH_SOURCE[0]}" ] || _scripts=.
for _main in "$_scripts"/../hooks/*/main.go; do
	_name=${_main%/main.go}
	_name=${_name##*/}
	[ "$_name" = harness ] || _name=harness-$_name
	programs="$programs${programs:+ }$_name"
done
unset _scripts _main _name

# use_go_collector exports the GOEXPERIMENT the harness's executables are
# built with: Go 1.26's older garbage collector (nogreenteagc). A harness
# process lives milliseconds with the collector switched off
# (internal/shortlived), and the new collector keeps each span's mark bits
# in the span's last page: a page touched for every span a hook allocates
# from, 8 % of a hook's page faults and 2 to 3 % of its time for nothing
# (docs/perf.md, "The collector the hooks are built with"). A GOEXPERIMENT
# set by the person building is theirs and kept; a toolchain that no longer
# knows the setting (Go means to drop it) builds with its own collector.
# internal/testbin builds the tests' executables the same way.
use_go_collector() {
	[ -z "${GOEXPERIMENT:-}" ] || return 0
	if GOEXPERIMENT=nogreenteagc go env GOEXPERIMENT >/dev/null 2>&1; then
		export GOEXPERIMENT=nogreenteagc
	fi
}
