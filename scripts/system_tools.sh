#!/bin/sh
# Optional system tools from Debian's packages, for `make demo` (demo) and `make test` (test).
#
# hlsgen runs without every one of them; each line below says what it adds. A missing tool is
# installed with apt-get when this runs as root on a machine that has apt-get, and says so first;
# otherwise (not root, no apt-get, HLSGEN_SYSTEM_TOOLS=skip, or apt-get failing) it is skipped with
# a note naming the package, and the set-up goes on. Exit status: always 0.
#
# usage: scripts/system_tools.sh demo|test
set -u

group=${1:-test}
lz4_header=${HLSGEN_LZ4_HEADER:-/usr/include/lz4.h}   # overridable for tests/unit/test_system_tools.py

# one tool a line: group | check (a shell test, true when present) | Debian package(s) | what it adds
tools() {
    cat <<EOF
demo|command -v ccache >/dev/null|ccache|Verilator rebuilds of the same runtime take seconds instead of ~20 s
demo|test -f "$lz4_header"|liblz4-dev|FST waveforms for hlsgen rtlsim --waves (VCD without it)
test|command -v iverilog >/dev/null|iverilog|hlsgen rtlsim --sim icarus, and the RTL fuzz slice of make test
test|command -v chromedriver >/dev/null|chromium chromium-driver|tests/browser opens OUT/report.html in a real browser
EOF
}

missing=""
reasons=""
nl='
'
while IFS='|' read -r tool_group check packages why; do
    [ "$group" = test ] || [ "$tool_group" = demo ] || continue
    eval "$check" && continue
    missing="$missing $packages"
    reasons="$reasons  $packages: $why$nl"
done <<EOF
$(tools)
EOF

[ -n "$missing" ] || exit 0

if [ "${HLSGEN_SYSTEM_TOOLS:-}" = skip ]; then
    why_not="HLSGEN_SYSTEM_TOOLS=skip"
elif ! command -v apt-get >/dev/null 2>&1; then
    why_not="no apt-get on this machine"
elif [ "$(id -u)" != 0 ]; then
    why_not="not root"
else
    why_not=""
fi

if [ -n "$why_not" ]; then
    printf 'make: note: optional system packages not installed (%s); hlsgen works without them:\n%s' \
        "$why_not" "$reasons"
    printf 'make: to add them: sudo apt-get install%s\n' "$missing"
    exit 0
fi

printf 'make: installing optional system packages with apt-get (Debian), as root:\n%s' "$reasons"
if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null; then
    printf 'make: installed%s\n' "$missing"
else
    printf 'make: note: apt-get install%s failed; going on without them\n' "$missing"
fi
exit 0
