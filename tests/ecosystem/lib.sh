# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the ecosystem tests: the npm packages of package.json, installed
# once (outside any sandbox) into a cache keyed by the lock file, so later
# runs need neither the registry nor the install time.
#
#   . lib.sh; eco_install || exit 0     sets ECO (the install directory)
#
# The cache is $RINGFENCE_TEST_CACHE, else /var/cache/ringfence-tests when
# writable, else ~/.cache/ringfence-tests; a complete install in any of
# them is used. Without node/npm, or with no
# cached install and no registry, every test of the calling script is
# skipped with the reason (eco_skip prints it as TAP).
eco_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

eco_cache_root() {
    if [ -n "${RINGFENCE_TEST_CACHE:-}" ]; then echo "$RINGFENCE_TEST_CACHE"
    elif mkdir -p /var/cache/ringfence-tests 2>/dev/null && [ -w /var/cache/ringfence-tests ]; then
        echo /var/cache/ringfence-tests
    else echo "${XDG_CACHE_HOME:-$HOME/.cache}/ringfence-tests"; fi
}

# eco_skip N REASON: N skipped tests and the plan.
eco_skip() {
    local i
    for ((i = 1; i <= $1; i++)); do echo "ok $i - ecosystem # SKIP $2"; done
    echo "1..$1"
}

eco_install() {
    command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
        { ECO_WHY="node/npm not installed"; return 1; }
    local key root
    key=$(sha256sum "$eco_here/package-lock.json" | cut -c1-16)
    # A complete install anywhere is used, even where this user cannot
    # write (root's, for the unprivileged test user).
    for root in ${RINGFENCE_TEST_CACHE:-} /var/cache/ringfence-tests "${XDG_CACHE_HOME:-$HOME/.cache}/ringfence-tests"; do
        ECO=$root/ecosystem-$key
        [ -f "$ECO/.complete" ] && return 0
    done
    root=$(eco_cache_root)
    ECO=$root/ecosystem-$key
    if ! timeout 30 npm ping >/dev/null 2>&1; then
        ECO_WHY="the npm registry cannot be reached and nothing is cached in $ECO"
        return 1
    fi
    # Install beside, then rename: a killed install never looks complete.
    local tmp
    mkdir -p "$root" && tmp=$(mktemp -d "$root/.install.XXXXXX") || { ECO_WHY="cannot write $root"; return 1; }
    cp "$eco_here/package.json" "$eco_here/package-lock.json" "$tmp/"
    # npm install with the lock, not npm ci: npm leaves the lock without the
    # other platforms' optional packages of opencode-ai, which ci refuses.
    echo "# npm install into $ECO (first run only)" >&2
    if ! (cd "$tmp" && npm install --no-audit --no-fund --loglevel=error >&2); then
        rm -rf "$tmp"; ECO_WHY="npm install failed (see stderr)"; return 1
    fi
    chmod -R a+rX "$tmp"
    touch "$tmp/.complete"
    rm -rf "$ECO" && mv "$tmp" "$ECO" || { rm -rf "$tmp"; ECO_WHY="cannot move the install into $ECO"; return 1; }
}

# Seconds since the epoch, with nanoseconds.
eco_now() { date +%s.%N; }
eco_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
