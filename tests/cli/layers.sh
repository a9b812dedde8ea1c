#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The library's floors (src/lib/README.md) hold: scripts/check-layers passes
# on this tree, and fails on copies of it into which a wrong-way include, a
# function declared below and defined above, a subcommand calling another,
# a paid-off debt, a folder without a floor or a file over 800 lines was
# fabricated (the controls: the check is not vacuous).
. "$(dirname "$0")/../lib.sh"

src=${RF_SOURCE_DIR:-}
check_layers=$src/scripts/check-layers
if [ -z "$src" ] || [ ! -r "$src/src/lib/README.md" ] || [ ! -r "$check_layers" ]; then
    skip "the floors hold" "RF_SOURCE_DIR (${src:-unset}) is not a readable source tree for $(id -un)"
    exit 0
fi

expect_exit 0 "no include crosses a floor the wrong way; no subcommand calls another" bash "$check_layers" "$src"
[ -z "$OUT" ] || diag "$OUT"

# copy: a fresh copy of what the check reads, in $SCRATCH/tree.
copy() {
    rm -rf "$SCRATCH/tree"
    mkdir -p "$SCRATCH/tree/src"
    cp -r "$src/src/lib" "$src/src/cli" "$SCRATCH/tree/src/"
}

copy
sed -i '0,/^#include "/s||#include "plan/build.h"\n#include "|' "$SCRATCH/tree/src/lib/backend/native/spawn.c"
expect_exit 1 "control: a backend including the planner fails" bash "$check_layers" "$SCRATCH/tree"
contains "...naming the file and the header" "$OUT" "backend/native/spawn.c: includes plan/build.h"

copy
echo '#include "policy/resolve.h"' >>"$SCRATCH/tree/src/lib/model/plan.h"
expect_exit 1 "control: the model reaching up for the resolver fails" bash "$check_layers" "$SCRATCH/tree"
contains "...naming the floors" "$OUT" "model/plan.h: includes policy/resolve.h: policy/ is on floor 8, model/ on floor 1"

copy
echo '#include "plan/build.h"' >>"$SCRATCH/tree/src/lib/policy/checks.h"
expect_exit 1 "control: a sibling on the same floor (policy/ -> plan/) fails" bash "$check_layers" "$SCRATCH/tree"

copy
echo 'const char *const *rf_plan_landlock_cannot(size_t *n);' >>"$SCRATCH/tree/src/lib/model/plan.h"
expect_exit 1 "control: the model declaring a function the planner defines (a call no include shows) fails" \
    bash "$check_layers" "$SCRATCH/tree"
contains "...naming both folders" "$OUT" "rf_plan_landlock_cannot: declared in a header of model/, defined in plan/"

copy
printf 'int rf_cli_helper(void);\nint rf_cli_helper(void)\n{\n    return rf_cli_learn(0, 0);\n}\n' >>"$SCRATCH/tree/src/cli/run.c"
expect_exit 1 "control: a subcommand calling another fails" bash "$check_layers" "$SCRATCH/tree"
contains "...naming the call" "$OUT" "src/cli/run.c: calls rf_cli_learn, the subcommand of learn.c"
contains "...and the function another file could call" "$OUT" "src/cli/run.c: a subcommand's file defines rf_cli_helper"

copy
sed -i 's|^```layer-debts$|&\nconfig/config.c plan/build.h|' "$SCRATCH/tree/src/lib/README.md"
expect_exit 1 "control: a debt paid off (or never owed) but still listed fails" bash "$check_layers" "$SCRATCH/tree"
contains "...asking to remove it" "$OUT" "debt no longer owed"

copy
sed -i '0,/^#include "/s||#include "plan/build.h"\n#include "|' "$SCRATCH/tree/src/lib/backend/native/spawn.c"
sed -i 's|^```layer-debts$|&\nbackend/native/spawn.c plan/build.h|' "$SCRATCH/tree/src/lib/README.md"
expect_exit 0 "...while a wrong-way include listed as a debt is let through" bash "$check_layers" "$SCRATCH/tree"

copy
mkdir "$SCRATCH/tree/src/lib/newstage" && echo '#include "model/plan.h"' >"$SCRATCH/tree/src/lib/newstage/x.c"
expect_exit 1 "control: a folder without a floor fails" bash "$check_layers" "$SCRATCH/tree"
contains "...naming the folder" "$OUT" "its folder newstage/ has no floor"

copy
for i in $(seq 801); do echo "/* line $i */"; done >>"$SCRATCH/tree/src/lib/model/plan.c"
expect_exit 1 "control: a file over 800 lines fails" bash "$check_layers" "$SCRATCH/tree"
contains "...naming it" "$OUT" "src/lib/model/plan.c:"
