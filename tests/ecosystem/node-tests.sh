#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Node tests of peers inside `ringfence run` (TAP): an ACP agent driven by an
# @agentclientprotocol/sdk client, and third-party MCP servers (npm's
# @modelcontextprotocol/server-memory, a Python one) driven by the official
# MCP SDK client, all through the sandbox's stdio. The npm packages come
# from lib.sh's cached install; skipped with the reason without it.
#   RINGFENCE=build/ringfence tests/ecosystem/node-tests.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rf=${RINGFENCE:?set RINGFENCE to the ringfence binary}
case $rf in /*) ;; *) rf=$PWD/$rf ;; esac
eco_install || { eco_skip 1 "$ECO_WHY"; exit 0; }
T=$(mktemp -d /tmp/rf-eco-node.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
cp "$here"/node/*.mjs "$here"/node/*.py "$T/" 2>/dev/null
ln -s "$ECO/node_modules" "$T/node_modules"
mkdir -p "$T/home"
cd "$T" && RINGFENCE=$rf RINGFENCE_HOME=$T/home node --test --test-reporter=tap --test-timeout=120000 ./*.test.mjs
