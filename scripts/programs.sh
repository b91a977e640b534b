# Sourced by scripts/build.sh and install.sh: the one list of harness
# executables. Every directory hooks/NAME holding a main.go is one:
# hooks/harness builds `harness`, every other `harness-NAME`. Adding an
# executable is adding its directory (and its entry in internal/programs.Mains
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
