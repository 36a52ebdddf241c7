#!/bin/sh
# Regenerates the editor/type-checker bindings under sdk/python/bindings/ from wit/v0.1.
# Run from anywhere, with componentize-py 0.25.1 on PATH (or COMPONENTIZE_PY=/path/to/it).
# The build never uses these files: componentize-py generates its own for the world it targets.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
wit=$here/../../wit/v0.1
cpy=${COMPONENTIZE_PY:-componentize-py}
for world in hook tool; do
    rm -rf "$here/bindings/$world"
    "$cpy" -d "$wit" -w "$world" bindings "$here/bindings/$world"
done
