# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run the tests against a build tree: RINGFENCE_LIB=build/libringfence.so.0
(tests/run sets it); without it, the installed library."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
