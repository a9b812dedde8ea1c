# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by tests/hosts/run: build (once, cached) the Debian guests the
# hosts of the matrix boot, one per suite and architecture (a host file sets
# SUITE and ARCH; Debian 12 amd64 by default). Root only: debootstrap and
# chroot need it.
#
#   image_setup SUITE ARCH   choose the recipe (bookworm amd64's is the
#                            one the matrix started with, its cache key
#                            unchanged: CI keeps its cached image)
#   image_name               debian12, debian13, debian11, debian13-arm64...
#   image_dir                prints the cache directory of the current
#                            recipe, building it first when missing; returns
#                            3 when the mirror cannot be reached and nothing
#                            is cached
#
# The cache holds, per recipe hash: root.img (ext4, made with mkfs.ext4 -d:
# no loop mount, so it works in containers and CI without /dev/loop*),
# vmlinuz, initrd.img, config (the kernel's), and done (written last).
# Guests boot it with -snapshot, so it stays as it was built.
set -u

RF_HOSTS_CACHE=${RF_HOSTS_CACHE:-/var/cache/ringfence-hosts}
SUITE=bookworm ARCH=amd64

# What goes into the guest. ringfence is static but its runtime libraries
# are the Debian package's dependencies, so a test of the .deb would find
# them; the rest is what tests/security, tests/cli/doctor.sh and run.sh call
# (node reads doctor's JSON, bwrap breaks userns on purpose in doctor.sh,
# curl/openssl/git drive network-allowlist.sh), strace to look at failures.
PACKAGES="systemd systemd-sysv dbus dbus-user-session libpam-systemd udev
linux-image-amd64 initramfs-tools
libjansson4 libyaml-0-2 libpcre2-8-0 libseccomp2 libcap2 libsystemd0
python3 procps util-linux passwd iproute2 kmod e2fsprogs netbase
curl openssl ca-certificates git nodejs bubblewrap strace psmisc file"

# The unit that starts the run: baked into the image, but it only mounts the
# run's disk and hands over to tests/hosts/guest-run on it, so changing the
# runner or a test never rebuilds the image.
UNIT='[Unit]
Description=ringfence host matrix: the tests of this boot
ConditionKernelCommandLine=rf.host
Wants=systemd-logind.service dbus.service
After=systemd-logind.service dbus.service systemd-user-sessions.service

[Service]
Type=simple
# A service gets a session keyring of its own that does not hold the user
# keyring of root (KeyringMode=private); the control in environment.sh reads
# a key from the user keyring, as a login shell can.
KeyringMode=shared
ExecStart=/usr/local/sbin/rf-hosttest
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target'

# rf.top=DIR: where the run disk goes (the host path of the checkout, so
# absolute paths in the tests hold); rf.host=NAME: the host to run. Output
# goes to the second serial port, which the host reads as the TAP stream.
# Whatever happens, the guest powers off at the end, at once (-ff): the
# output is out already, and a mount that a test left behind must not hold
# the shutdown for minutes.
START='#!/bin/bash
set -u
arg() { tr " " "\n" </proc/cmdline | sed -n "s/^$1=//p" | tail -1; }
top=$(arg rf.top) host=$(arg rf.host)
stty -F /dev/ttyS1 raw -echo 115200 2>/dev/null
mkdir -p "$top" && mount -o ro /dev/vdb "$top" &&
    bash "$top/tests/hosts/guest-run" "$host" "$top" >/dev/ttyS1 2>&1 ||
    echo "not ok - $host: the guest runner failed (exit $?)" >/dev/ttyS1
echo "# rf-hosts: end" >/dev/ttyS1
sync
systemctl poweroff -ff'

recipe_key() {
    {
        echo "$SUITE"; echo "$PACKAGES"; echo "$UNIT"; echo "$START"; declare -f build_rootfs make_image
        # Debian 12 amd64's key is what it was before other suites came:
        # the rest is hashed only for the recipes that use it.
        if [ "$SUITE/$ARCH" != bookworm/amd64 ]; then
            echo "$ARCH"; declare -f debootstrap configure_extra
        fi
    } | sha256sum | cut -c1-16
}

# Debian's release number of a suite, for the cache's and the hosts' names.
suite_version() {
    case $1 in bullseye) echo 11 ;; bookworm) echo 12 ;; trixie) echo 13 ;; *) echo "$1" ;; esac
}
image_name() {
    echo "debian$(suite_version "$SUITE")${ARCH/#amd64/}" | sed 's/\([0-9]\)\([a-z]\)/\1-\2/'
}

# The recipe of SUITE on ARCH: the same guest, with that suite's kernel for
# that architecture. Debian 13 ships AppArmor active by default (apparmor
# is of priority standard there and in 12, but minbase leaves it out): it
# is installed on 13, as users have it. On arm64 qemu's virt machine has
# one UART, so the TAP stream goes out on a virtio serial port instead.
BASE_PACKAGES=$PACKAGES BASE_START=$START
image_setup() {
    SUITE=$1 ARCH=$2
    PACKAGES=$(echo "$BASE_PACKAGES" | sed "s/linux-image-amd64/linux-image-$ARCH/")
    [ "$SUITE" = trixie ] && PACKAGES="$PACKAGES
apparmor"
    START=$BASE_START
    [ "$ARCH" = amd64 ] || START=${START//\/dev\/ttyS1/\/dev\/virtio-ports\/rf.tap}
    return 0
}

# debootstrap for another architecture than the machine's: qemu-user-static
# runs its second stage (binfmt_misc). A function rather than a change to
# build_rootfs, whose text is part of Debian 12's cache key.
debootstrap() {
    if [ "$ARCH" = "$(dpkg --print-architecture)" ]; then command debootstrap "$@"
    else command debootstrap --arch="$ARCH" "$@"; fi
}

# What the other recipes change once build_rootfs is done (hashed with
# them): on arm64 the TAP port's name comes from udev's rule for
# /dev/virtio-ports, which needs virtio_console loaded before the unit runs.
configure_extra() {
    local dir=$1
    if [ "$ARCH" != amd64 ]; then
        echo virtio_console >"$dir/etc/modules-load.d/rf-hosts.conf"
    fi
}

# The Debian mirror apt already uses (deb822 .sources or one-line .list),
# so no host name is written down here: the one of SUITE, else the one of
# any Debian suite apt knows (a mirror carries every suite and arch).
apt_mirror() {
    local want
    want=$(apt_mirror_of "$SUITE" | head -1)
    [ -n "$want" ] || want=$(apt_mirror_of '[a-z]+' | grep -v security | head -1)
    echo "$want"
}
apt_mirror_of() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v s="$1" 'BEGIN { RS = ""; FS = "\n" }
            $0 ~ "Suites:[^\n]*[ \t]" s "([ \t]|$|\n)" && $0 ~ "Types:[^\n]*deb([ \t]|$|\n)" {
                for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); print u[2]; exit } }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk -v s="^$1$" '$1 == "deb" && $0 !~ /security/ {
                for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($(i + 1) ~ s) print $i; break } }' "$f"
    done
}

# mirror_reachable URI: can the suite's Release file be fetched (5 s)?
mirror_reachable() {
    python3 - "$1/dists/$SUITE/Release" <<'EOF' 2>/dev/null
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=5).read(64)
EOF
}

log() { echo "hosts: $*" >&2; }

# build_rootfs DIR MIRROR: debootstrap and configure the guest's files.
build_rootfs() {
    local dir=$1 mirror=$2
    debootstrap --variant=minbase --include="$(echo $PACKAGES | tr ' ' ,)" \
        "$SUITE" "$dir" "$mirror" >"$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; return 1; }
    # What the Debian installer writes and debootstrap does not: tests
    # resolve localhost through /etc/hosts, as on any installed host.
    echo rf-guest >"$dir/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\trf-guest\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$dir/etc/hosts"
    echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$dir/etc/fstab"
    # root without a password, for a look on the console when debugging.
    chroot "$dir" passwd -d root >/dev/null
    chroot "$dir" useradd --create-home --uid 1000 --shell /bin/bash alice
    printf '%s\n' "$START" >"$dir/usr/local/sbin/rf-hosttest"
    chmod 755 "$dir/usr/local/sbin/rf-hosttest"
    printf '%s\n' "$UNIT" >"$dir/etc/systemd/system/ringfence-hosttest.service"
    ln -sf /etc/systemd/system/ringfence-hosttest.service \
        "$dir/etc/systemd/system/multi-user.target.wants/ringfence-hosttest.service"
    # Nothing on the guest should wait for a network or wake up to update.
    rm -f "$dir"/etc/systemd/system/timers.target.wants/*
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
}

# make_image DIR OUT: the root filesystem as an ext4 image, plus the kernel.
make_image() {
    local dir=$1 out=$2 mb
    cp "$dir"/boot/vmlinuz-* "$out/vmlinuz"
    cp "$dir"/boot/initrd.img-* "$out/initrd.img"
    cp "$dir"/boot/config-* "$out/config"
    # Used space plus 1 GiB for the tests' scratch files (the guest's
    # writes go to qemu's snapshot overlay, not to this file).
    mb=$(( $(du -sm "$dir" | cut -f1) + 1024 ))
    mkfs.ext4 -q -F -L rfroot -d "$dir" "$out/root.img" "${mb}M"
}

image_dir() {
    local key name dest mirror tmp t0 rc=0
    key=$(recipe_key)
    name=$(image_name)
    dest=$RF_HOSTS_CACHE/$name-$key
    mkdir -p "$RF_HOSTS_CACHE"
    # One builder at a time per image; a second caller waits and then
    # reuses it (Debian 12's lock keeps its old name: a CI run that only
    # reads its cached image never waits for another suite's build).
    if [ "$name" = debian12 ]; then exec 9>"$RF_HOSTS_CACHE/lock"; else exec 9>"$RF_HOSTS_CACHE/lock.$name"; fi
    flock 9
    if [ -f "$dest/done" ]; then
        log "image: cached $dest"; flock -u 9; echo "$dest"; return 0
    fi
    mirror=$(apt_mirror | head -1)
    if [ -z "$mirror" ]; then
        log "no $SUITE mirror in the apt sources"; flock -u 9; return 3
    fi
    if ! mirror_reachable "$mirror"; then
        log "mirror $mirror cannot be reached and no image is cached"; flock -u 9; return 3
    fi
    t0=$SECONDS
    log "image: building $dest from $mirror (debootstrap, a few minutes)"
    tmp=$RF_HOSTS_CACHE/build.$$
    rm -rf "$tmp" "$tmp.out" && mkdir -p "$tmp" "$tmp.out"
    { build_rootfs "$tmp/root" "$mirror" && configure_extra "$tmp/root" &&
        make_image "$tmp/root" "$tmp.out"; } >&2 || rc=$?
    rm -rf "$tmp"
    if [ $rc != 0 ]; then
        rm -rf "$tmp.out"; log "image: build failed"; flock -u 9; return 1
    fi
    # Older recipes' images of this suite and architecture are of no
    # further use (16 hex digits: debian13-* is not debian13-arm64-*).
    rm -rf "$RF_HOSTS_CACHE/$name-"????????????????
    touch "$tmp.out/done" && mv "$tmp.out" "$dest"
    log "image: built in $((SECONDS - t0)) s ($(du -sh "$dest/root.img" | cut -f1) image)"
    flock -u 9
    echo "$dest"
}
