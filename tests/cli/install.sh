#!/usr/bin/env bash
# meson install into a staging directory (DESTDIR): every file a system
# install puts in place, a C program built against the staged header and
# pkg-config file and run against the staged libringfence.so, and the staged
# binary. The build is a fresh one of RF_SOURCE_DIR, out of tree under
# $SCRATCH, so it needs neither root nor a writable checkout.
. "$(dirname "$0")/../lib.sh"

src=${RF_SOURCE_DIR:-}
if [ -z "$src" ] || [ ! -r "$src/meson.build" ]; then
    skip "meson install" "RF_SOURCE_DIR (${src:-unset}) is not a readable source tree for $(id -un)"
    exit 0
fi
for tool in meson ninja pkg-config cc python3; do
    if ! command -v "$tool" >/dev/null; then
        skip "meson install" "$tool is not installed"
        exit 0
    fi
done

B=$SCRATCH/b
STAGE=$SCRATCH/stage
start=$(date +%s)
if ! meson setup "$B" "$src" --prefix=/usr >"$SCRATCH/setup.log" 2>&1; then
    fail "meson setup of a fresh build"; diag "$(tail -15 "$SCRATCH/setup.log")"
    exit 1
fi
pass "meson setup of a fresh build (out of tree)"

# Build only what install copies: the tests and benchmarks are not needed.
mapfile -t targets < <(meson introspect "$B" --targets | python3 -c '
import json, os, sys
b = os.path.realpath(sys.argv[1])
for t in json.load(sys.stdin):
    if t["installed"]:
        for f in t["filename"]:
            print(os.path.relpath(f, b))' "$B")
if [ ${#targets[@]} -eq 0 ]; then
    fail "meson introspect lists the installed targets"
    exit 1
fi
if ! ninja -C "$B" "${targets[@]}" >"$SCRATCH/build.log" 2>&1; then
    fail "ninja builds the installed targets"; diag "$(tail -15 "$SCRATCH/build.log")"
    exit 1
fi
pass "ninja builds the installed targets (${targets[*]})"

expect_exit 0 "DESTDIR=... meson install" env DESTDIR="$STAGE" meson install -C "$B" --no-rebuild
diag "setup, build and install took $(($(date +%s) - start)) s"

U=$STAGE/usr
check "bin/ringfence" test -x "$U/bin/ringfence"
check "include/ringfence.h" test -f "$U/include/ringfence.h"
lib=$(dirname "$(find "$U/lib" -name 'libringfence.so.0' 2>/dev/null | head -1)")
check "libringfence.so.0 under lib" test -n "$lib" -a -e "$lib/libringfence.so.0"
check "libringfence.so (development link)" test -L "$lib/libringfence.so"
check "libringfence.so.0 is a link to the versioned file" \
    test -L "$lib/libringfence.so.0" -a -f "$(readlink -f "$lib/libringfence.so.0")"
soname=$(readelf -d "$lib/libringfence.so.0" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
check "soname is libringfence.so.0" test "$soname" = libringfence.so.0
# Hardening of what is installed: full RELRO (read-only GOT, bound at start).
for elf in "$U/bin/ringfence" "$lib/libringfence.so.0"; do
    dyn=$(readelf -d "$elf" 2>/dev/null)
    prog=$(readelf -lW "$elf" 2>/dev/null)
    check "$(basename "$elf") is linked with full RELRO (GNU_RELRO and BIND_NOW)" \
        sh -c 'printf "%s\n" "$1" | grep -q GNU_RELRO && printf "%s\n" "$2" | grep -q BIND_NOW' _ "$prog" "$dyn"
done
pc=$lib/pkgconfig/ringfence.pc
check "pkgconfig/ringfence.pc" test -f "$pc"
if command -v scdoc >/dev/null; then
    check "man page share/man/man1/ringfence.1" test -s "$U/share/man/man1/ringfence.1"
    # One page per subcommand, its options from the option table.
    for sub in run exec mcp fs plan doctor export instance learn profile; do
        page=$U/share/man/man1/ringfence-$sub.1
        check "man page share/man/man1/ringfence-$sub.1" test -s "$page"
    done
    check "ringfence-run.1 lists a run option (--workspace)" grep -q 'workspace' "$U/share/man/man1/ringfence-run.1"
    check "ringfence-instance.1 lists its own option (--credential)" grep -q -- '--credential' "$U/share/man/man1/ringfence-instance.1"
    check "ringfence-run.1 lacks instance-only options (--credential)" \
        sh -c "! grep -q -- --credential '$U/share/man/man1/ringfence-run.1'"
else
    skip "man page share/man/man1/ringfence.1" "scdoc is not installed, so it is not built"
fi
for p in node python rust go java git claude-code codex gemini-cli opencode chat; do
    check "profile share/ringfence/profiles/$p.yaml" test -s "$U/share/ringfence/profiles/$p.yaml"
done
check "bash completion" bash -n "$U/share/bash-completion/completions/ringfence"
check "zsh completion" test -s "$U/share/zsh/vendor-completions/_ringfence"
check "fish completion" test -s "$U/share/fish/vendor_completions.d/ringfence.fish"
check "share/doc/ringfence/config.schema.json" \
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$U/share/doc/ringfence/config.schema.json"
for f in "$src"/examples/*; do
    # the scenario directories (examples/NNN-*/) whole, with their run scripts
    check "share/doc/ringfence/examples/$(basename "$f")" \
        diff -r -q "$f" "$U/share/doc/ringfence/examples/$(basename "$f")"
done

# The staged binary runs and says its version.
expect_exit 0 "installed ringfence --version" "$U/bin/ringfence" --version
contains "version from the installed binary" "$OUT" "ringfence "
want_version=${OUT#ringfence }

# A C program against the staged header and pkg-config file.
cat >"$SCRATCH/client.c" <<'EOF'
#include <ringfence.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    rf_error *err = NULL;
    printf("version %s\n", rf_version());
    rf_config *cfg = rf_config_new();
    if (!cfg || rf_config_add_json(cfg, "test", "{}", &err) < 0)
        goto fail;
    rf_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cwd = argc > 1 ? argv[1] : NULL;
    rf_policy *policy = rf_policy_resolve(cfg, &ctx, &err);
    if (!policy)
        goto fail;
    char *const cmd[] = {"/bin/true", NULL};
    rf_plan *plan = rf_plan_build(policy, cmd, &err);
    if (!plan)
        goto fail;
    char *json = rf_plan_to_json(plan);
    if (!json)
        return 1;
    printf("plan %.40s\n", json);
    free(json);
    rf_plan_free(plan);
    rf_policy_free(policy);
    rf_config_free(cfg);
    return 0;
fail:
    fprintf(stderr, "client: %s\n", err ? rf_error_message(err) : "out of memory");
    rf_error_free(err);
    return 1;
}
EOF
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$STAGE"
expect_exit 0 "pkg-config --cflags --libs ringfence" pkg-config --cflags --libs ringfence
flags=$OUT
contains "cflags point into the stage" "$flags" "-I$U/include"
contains "libs point into the stage" "$flags" "-L$lib"
contains "libs name the library" "$flags" "-lringfence"
expect_exit 0 "pkg-config --modversion ringfence" pkg-config --modversion ringfence
contains "pkg-config version matches the binary" "$OUT" "$want_version"
# shellcheck disable=SC2086 # pkg-config output is a list of flags
expect_exit 0 "compile a client against the staged header and .pc" \
    cc -std=c11 -Wall -Wextra -Werror -o "$SCRATCH/client" "$SCRATCH/client.c" $flags
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
if [ -x "$SCRATCH/client" ]; then
    deps=$(LD_LIBRARY_PATH="$lib" ldd "$SCRATCH/client" 2>&1)
    contains "client links the staged libringfence.so.0" "$deps" "libringfence.so.0 => $lib/libringfence.so.0"
    expect_exit 0 "client runs against the staged library" \
        env LD_LIBRARY_PATH="$lib" "$SCRATCH/client" "$WS"
    contains "rf_version() through the library" "$OUT" "version $want_version"
    contains "rf_plan_to_json() through the library" "$OUT" "plan {"
else
    skip "client runs against the staged library" "it did not compile"
fi
