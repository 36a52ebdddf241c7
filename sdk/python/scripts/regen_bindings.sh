#!/bin/sh
# Regenerates the editor/type-checker bindings under sdk/python/bindings/ from wit/v0.1 and the
# `editor` world of wit/worlds.wit (every capability, both the hook and the tool exports).
# Run from anywhere, with componentize-py 0.25.1 on PATH (or COMPONENTIZE_PY=/path/to/it).
# The build never uses these files: componentize-py generates its own for the world it targets.
# `cargo test --release -p warden --test languages python_editor_bindings` fails when they are
# stale, and rewrites them.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cpy=${COMPONENTIZE_PY:-componentize-py}
rm -rf "$here/bindings"
"$cpy" -d "$here/../../wit/v0.1" -d "$here/wit" -w warden:python/editor@0.1.0 bindings "$here/bindings"
