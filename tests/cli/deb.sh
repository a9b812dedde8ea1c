#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian packaging: dpkg-buildpackage -us -uc -b on a copy of RF_SOURCE_DIR
# builds ringfence, libringfence0 and libringfence-dev; lintian reports no
# error; the packages, unpacked into a fresh directory tree with dpkg -x,
# hold what they should, and the packaged binary runs `doctor` and a command
# inside `ringfence run`; a C program builds against the packaged header,
# .pc file and library. A package build takes minutes, so it runs only with
# RF_TEST_DEB=1 (CI sets it in a step of its own).
. "$(dirname "$0")/../lib.sh"

src=${RF_SOURCE_DIR:-}
if [ "${RF_TEST_DEB:-}" != 1 ]; then
    skip "Debian packages" "a package build takes minutes: set RF_TEST_DEB=1 to run it"
    exit 0
fi
# The packages are built from source whatever build is under test: once,
# with the normal build, not again under the sanitizers.
if ldd "$RINGFENCE" 2>/dev/null | grep -q libasan || case $RINGFENCE in *asan*) true ;; *) false ;; esac; then
    skip "Debian packages" "built once, with the normal build, not again for $RINGFENCE"
    exit 0
fi
if [ -z "$src" ] || [ ! -r "$src/debian/control" ]; then
    skip "Debian packages" "RF_SOURCE_DIR (${src:-unset}) is not a readable source tree for $(id -un)"
    exit 0
fi
for tool in dpkg-buildpackage dh meson ninja pkg-config cc; do
    if ! command -v "$tool" >/dev/null; then
        skip "Debian packages" "$tool is not installed (scripts/setup installs it)"
        exit 0
    fi
done

# Build on a copy: dpkg-buildpackage writes into the tree and its parent.
P=$SCRATCH/pkg
mkdir -p "$P/ringfence"
tar -C "$src" --exclude=./.git --exclude='./build*' --exclude='./obj-*' \
    --exclude=./debian/.debhelper -cf - . | tar -C "$P/ringfence" -xf -
start=$(date +%s)
if (cd "$P/ringfence" && dpkg-buildpackage -us -uc -b) >"$SCRATCH/deb.log" 2>&1; then
    pass "dpkg-buildpackage -us -uc -b"
else
    fail "dpkg-buildpackage -us -uc -b"; diag "$(tail -20 "$SCRATCH/deb.log")"
    exit 1
fi
diag "dpkg-buildpackage took $(($(date +%s) - start)) s"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for p in ringfence libringfence0 libringfence-dev; do
    check "$p .deb built" test -f "$P/${p}_0.1.0_$arch.deb"
done

if command -v lintian >/dev/null; then
    lint=$(lintian --tag-display-limit 0 "$P"/ringfence_*_"$arch".changes 2>&1)
    errors=$(printf '%s\n' "$lint" | grep '^E:')
    if [ -z "$errors" ]; then pass "lintian: no errors"; else
        fail "lintian: no errors"; diag "$errors"; fi
    [ -n "$lint" ] && diag "lintian: $lint"
else
    skip "lintian: no errors" "lintian is not installed"
fi

# A fresh directory tree with the three packages unpacked.
R=$SCRATCH/root
for p in ringfence libringfence0 libringfence-dev; do
    dpkg -x "$P/${p}_0.1.0_$arch.deb" "$R" || fail "dpkg -x $p"
done
L=$R/usr/lib/$multiarch
check "ringfence: usr/bin/ringfence" test -x "$R/usr/bin/ringfence"
check "ringfence: man page" test -s "$R/usr/share/man/man1/ringfence.1.gz"
check "ringfence: bash completion" test -s "$R/usr/share/bash-completion/completions/ringfence"
check "ringfence: schema" test -s "$R/usr/share/doc/ringfence/config.schema.json"
check "libringfence0: libringfence.so.0" test -e "$L/libringfence.so.0"
check "libringfence-dev: header" test -f "$R/usr/include/ringfence.h"
check "libringfence-dev: pkg-config file" test -f "$L/pkgconfig/ringfence.pc"
check "libringfence-dev: libringfence.so link" test -L "$L/libringfence.so"
contents=$(dpkg -c "$P/libringfence0_0.1.0_$arch.deb")
lacks "libringfence0 holds no header" "$contents" "ringfence.h"
deps=$(dpkg -f "$P/ringfence_0.1.0_${arch}.deb" Depends)
contains "ringfence depends on libc" "$deps" "libc6"
# libssl is dlopen()ed for credential routes (src/lib/net/route_ssl.h): no
# shlibs entry finds it, so the control file names it.
contains "ringfence depends on libssl3 (dlopen()ed for routes)" "$deps" "libssl3"

# The AppArmor profile that lets the binary make user namespaces where
# Ubuntu restricts them (docs/containers.md): shipped, loaded by postinst
# where AppArmor is active, and granting userns to /usr/bin/ringfence only.
rcontents=$(dpkg -c "$P/ringfence_0.1.0_$arch.deb")
contains "ringfence ships etc/apparmor.d/ringfence" "$rcontents" "./etc/apparmor.d/ringfence"
profile=$R/etc/apparmor.d/ringfence
contains "the profile grants user namespaces" "$(cat "$profile" 2>/dev/null)" "userns,"
contains "... to the installed binary" "$(cat "$profile" 2>/dev/null)" "profile ringfence /usr/bin/ringfence"
mkdir -p "$SCRATCH/ctrl" && dpkg -e "$P/ringfence_0.1.0_$arch.deb" "$SCRATCH/ctrl"
contains "postinst loads it where AppArmor is active" "$(cat "$SCRATCH/ctrl/postinst" 2>/dev/null)" \
    "apparmor_parser"
# The system audit log's units (docs/audit.md): shipped once, the socket
# enabled by postinst, the log's directory root's alone.
contains "ringfence ships ringfence-audit.socket" "$rcontents" "systemd/system/ringfence-audit.socket"
contains "ringfence ships ringfence-audit.service" "$rcontents" "systemd/system/ringfence-audit.service"
check "...each unit once (not in both /lib and /usr/lib)" \
    test "$(grep -c 'systemd/system/ringfence-audit\.' <<<"$rcontents")" = 2
contains "postinst enables the socket" "$(cat "$SCRATCH/ctrl/postinst" 2>/dev/null)" "ringfence-audit.socket"
contains "tmpfiles: /var/log/ringfence 0750 root" "$(zcat -f "$R"/usr/lib/tmpfiles.d/ringfence.conf "$R"/lib/tmpfiles.d/ringfence.conf 2>/dev/null)" \
    "d /var/log/ringfence 0750 root root"
# Debian 12's parser (AppArmor 3.0) knows neither abi 4.0 nor userns; 4.0's
# (Debian 13, Ubuntu 24.04) parses it without loading anything (-Q). Where
# the installed one is older, Debian 13's is fetched from Debian's archive
# with the C library it needs and run through that library's loader.
aa4_fetch() { # DIR: unpack Debian 13's apparmor and libc6 into DIR/root
    local dir=$1 mirror=http://deb.debian.org/debian arch pkg f
    arch=$(dpkg --print-architecture)
    mkdir -p "$dir/root" &&
        curl -fsS -m 60 -o "$dir/Packages.xz" "$mirror/dists/trixie/main/binary-$arch/Packages.xz" || return 1
    for pkg in apparmor libc6; do
        f=$(xz -dc "$dir/Packages.xz" | awk -v p="Package: $pkg" '$0 == p {f = 1} f && /^Filename:/ {print $2; exit}')
        [ -n "$f" ] && curl -fsS -m 120 -o "$dir/$pkg.deb" "$mirror/$f" && dpkg-deb -x "$dir/$pkg.deb" "$dir/root" ||
            return 1
    done
}
aa4_parser() { # PROFILE: parse it with Debian 13's parser from $SCRATCH/aa4
    local r=$SCRATCH/aa4/root multiarch ld
    multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || cc -print-multiarch)
    ld=$(find "$r/usr/lib/$multiarch" -maxdepth 1 -name 'ld-linux*.so*' | head -1)
    "$ld" --library-path "$r/usr/lib/$multiarch" "$r/usr/sbin/apparmor_parser" -Q -K \
        --base "$r/etc/apparmor.d" --config-file /dev/null "$1"
}
if command -v apparmor_parser >/dev/null && apparmor_parser --version 2>/dev/null | grep -qE 'version [4-9]'; then
    expect_exit 0 "the profile parses (apparmor_parser -Q)" apparmor_parser -Q -K "$profile"
elif ! aa4_fetch "$SCRATCH/aa4" >"$SCRATCH/aa4.log" 2>&1; then
    skip "the profile parses" "the installed parser predates the userns rule (AppArmor 4), and Debian 13's could not be fetched: $(tail -1 "$SCRATCH/aa4.log")"
else
    expect_exit 0 "the profile parses (Debian 13's apparmor_parser -Q)" aa4_parser "$profile"
    sed 's/^  userns,/  userns bogus_word,/' "$profile" >"$SCRATCH/bad-profile"
    expect_exit 1 "  ... control: a broken rule in it does not" aa4_parser "$SCRATCH/bad-profile"
fi

# The packaged binary, from the unpacked tree.
expect_exit 0 "packaged ringfence --version" "$R/usr/bin/ringfence" --version
contains "packaged version" "$OUT" "ringfence 0.1.0"
rc=0
"$R/usr/bin/ringfence" doctor >"$SCRATCH/doctor" 2>&1 || rc=$?
# doctor exits non-zero when the host lacks a protection; it must not crash.
if [ "$rc" -lt 2 ] && [ -s "$SCRATCH/doctor" ]; then pass "packaged ringfence doctor (exit $rc)"; else
    fail "packaged ringfence doctor"; diag "exit $rc" "$(head -20 "$SCRATCH/doctor")"; fi
expect_exit 0 "packaged ringfence run -- sh -c ..." \
    "$R/usr/bin/ringfence" run --workspace "$WS" -- sh -c 'echo inside; test ! -e /root/.bashrc'
contains "packaged run printed the command's output" "$OUT" "inside"
expect_exit 3 "packaged ringfence run passes the exit status" \
    "$R/usr/bin/ringfence" run --workspace "$WS" -- sh -c 'exit 3'

# A client against the packaged development files and shared library.
cat >"$SCRATCH/client.c" <<'EOC'
#include <ringfence.h>
#include <stdio.h>
int main(void) { printf("version %s\n", rf_version()); return 0; }
EOC
flags=$(PKG_CONFIG_PATH="$L/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$R" pkg-config --cflags --libs ringfence)
contains "pkg-config flags point into the unpacked tree" "$flags" "-L$L"
# shellcheck disable=SC2086 # pkg-config output is a list of flags
expect_exit 0 "compile a client against the packaged files" \
    cc -std=c11 -Wall -Werror -o "$SCRATCH/client" "$SCRATCH/client.c" $flags
if [ -x "$SCRATCH/client" ]; then
    expect_exit 0 "client runs against the packaged libringfence.so.0" \
        env LD_LIBRARY_PATH="$L" "$SCRATCH/client"
    contains "rf_version() through the packaged library" "$OUT" "version 0.1.0"
    libs=$(LD_LIBRARY_PATH="$L" ldd "$SCRATCH/client")
    contains "client resolves the packaged library" "$libs" "$L/libringfence.so.0"
else
    skip "client runs against the packaged library" "it did not compile"
fi
[ "$T_FAILED" = 0 ]
